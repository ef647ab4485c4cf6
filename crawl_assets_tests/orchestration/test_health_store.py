"""Source health lives in our own table of the instance's database (SQLite beside the embedded instance, the
instance's Postgres otherwise), not in Dagster's daemon cursor store; values an earlier version left in that
store are carried over the first time a source is read."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as sa

from crawl_assets.orchestration.monitoring.health import (
    FILENAME,
    LEGACY_PREFIX,
    database_url,
    engine as health_engine,
    load_health,
    mark_pending,
    record_failure,
    record_success,
    save_health,
)
from crawl_assets.scheduling.policy import SourceHealth


@pytest.fixture(params=["sqlite", "postgres"])
def instance(request, dagster_home: Path, monkeypatch):
    """The project's instance (dagster.yaml's environment-selected storage) on each database."""
    if request.param == "postgres":
        monkeypatch.setenv("DAGSTER_PG_URL", request.getfixturevalue("pg_url"))
    with dg.DagsterInstance.get() as inst:
        yield inst


def _rows(instance: dg.DagsterInstance) -> dict[str, str]:
    with sa.create_engine(database_url(instance), poolclass=sa.pool.NullPool).connect() as conn:
        return dict(conn.execute(sa.text("SELECT source_key, health FROM crawl_source_health")).all())


def test_the_table_is_in_the_instance_database(instance, dagster_home: Path):
    url = database_url(instance)
    if os.environ.get("DAGSTER_PG_URL"):
        assert url == os.environ["DAGSTER_PG_URL"]  # the test URL already names psycopg2
    else:
        assert url == f"sqlite:///{dagster_home / 'storage' / FILENAME}"
    record_failure(instance, "t.x.a", "boom", run_id="r1", now=100.0)
    assert SourceHealth.from_json(_rows(instance)["t.x.a"]).failures == 1
    # nothing is written to Dagster's cursor store any more
    assert instance.run_storage.get_cursor_values({LEGACY_PREFIX + "t.x.a"}) == {}


def test_round_trip_and_one_upsert_for_new_and_existing_keys(instance):
    assert load_health(instance, ["t.x.never"]) == {"t.x.never": SourceHealth()}
    first = record_success(instance, "t.x.a", run_id="r1", now=10.0, lag_seconds=5.0)
    assert load_health(instance, ["t.x.a"])["t.x.a"] == first
    assert mark_pending(instance, "t.x.a", first, True).pending
    updates = {"t.x.a": SourceHealth(last_success=20.0, failures=0), "t.x.b": SourceHealth(last_failure=21.0, failures=3)}
    save_health(instance, updates)  # an existing key and a new one in the same call
    assert load_health(instance, ["t.x.a", "t.x.b", "t.x.c"]) == {**updates, "t.x.c": SourceHealth()}


def test_thousands_of_sources_load_in_a_few_statements(instance):
    keys = [f"t.x.s{i}" for i in range(5000)]
    save_health(instance, {k: SourceHealth(last_success=float(i + 1)) for i, k in enumerate(keys)})
    statements: list[str] = []
    engine = health_engine(database_url(instance))
    listener = lambda conn, cursor, statement, *args: statements.append(statement)  # noqa: E731
    sa.event.listen(engine, "before_cursor_execute", listener)
    try:
        loaded = load_health(instance, keys)
    finally:
        sa.event.remove(engine, "before_cursor_execute", listener)
    assert [loaded[k].last_success for k in keys] == [float(i + 1) for i in range(5000)]
    assert len([s for s in statements if "crawl_source_health" in s]) <= 3


def test_health_left_in_the_cursor_store_is_carried_over_once(instance):
    legacy = SourceHealth(last_success=50.0, pending=True, failures=0, last_run_id="old")
    instance.run_storage.set_cursor_values({LEGACY_PREFIX + "t.x.old": legacy.to_json()})
    instance.run_storage.set_cursor_values({LEGACY_PREFIX + "t.x.mine": SourceHealth(failures=9).to_json()})
    save_health(instance, {"t.x.mine": SourceHealth(failures=1)})  # a row already there wins over the old value

    assert load_health(instance, ["t.x.old", "t.x.mine", "t.x.new"]) == {
        "t.x.old": legacy, "t.x.mine": SourceHealth(failures=1), "t.x.new": SourceHealth()}
    assert SourceHealth.from_json(_rows(instance)["t.x.old"]) == legacy  # copied into our table
    # the old store is not the source of truth any more: a later change there is not read back
    instance.run_storage.set_cursor_values({LEGACY_PREFIX + "t.x.old": SourceHealth(failures=7).to_json()})
    assert load_health(instance, ["t.x.old"])["t.x.old"] == legacy
    # pending survives the upgrade: the next success keeps it until the batch clears it
    assert record_success(instance, "t.x.old", run_id="new", before=load_health(instance, ["t.x.old"])["t.x.old"]).pending
