"""Outages: the index refusing and dropping requests and rejecting items, the source answering 5xx,
timeouts, dropped connections and malformed pages, the instance's PostgreSQL restarted mid-run. In each
case nothing is lost (indexed, or dead-lettered and replayed), the other source is unaffected, and the
state after recovery equals a clean sync's."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest
from crawl_assets.index.outcomes import iter_letters
from crawl_assets.index.replay import replay_deadletters
from crawl_assets_tests.faults.private_postgres import postgres_bin, private_postgres
from crawl_assets_tests.faults.harness import TENANT, TG_KEY, X_KEY, Snapshot, SyncWorld, differences, take_snapshot


_CLEAN: dict[str, Snapshot] = {}  # corpus digest -> the clean sync's snapshot, for every test of this module


@pytest.fixture
def clean(scratch, x_server, es_cluster):
    """The clean sync's snapshot (made once for the session's corpus: the tests' stand-ins serve the same
    posts); the node is emptied afterwards for the faulted sync."""
    corpus = hashlib.sha256(json.dumps([x_server.corpus.users, x_server.corpus.tweets], sort_keys=True,
                                       default=str).encode()).hexdigest()
    if corpus not in _CLEAN:
        world = SyncWorld(scratch / "clean", x_server.url, es_cluster.url, None, telegram_messages=400,
                          x_pages_per_run=500, telegram_pages_per_run=200)
        world.run_until_done(max_runs=3)
        snap = take_snapshot(world.lake, es_cluster.client)
        assert not snap.problems and snap.records
        _CLEAN[corpus] = snap
        es_cluster.wipe()
    return _CLEAN[corpus]


def _pending_ids(world: SyncWorld) -> list[str]:
    return sorted(letter.id or "" for letter in iter_letters(world.lake.root, "records", TENANT))


def test_index_outage_then_replay_equals_a_clean_sync(clean, scratch, x_server, es_cluster, fault_proxy):
    es, node = fault_proxy, es_cluster.client
    world = SyncWorld(scratch / "faulted", x_server.url, fault_proxy.url, None, telegram_messages=400,
                      x_pages_per_run=500, telegram_pages_per_run=200)
    keys = sorted(clean.records)
    doomed = keys[::25]  # refused for good (a mapping error): dead-lettered, then replayed after the fix
    pushed_back = keys[7::25]  # per-item 429 twice: retried by the sink, indexed without a dead letter
    es.faults.fail_requests(3, 429)  # whole bulk requests refused
    es.faults.fail_requests(2, 503)
    es.faults.drop_connections(1)  # no answer, nothing applied
    es.faults.drop_connections(1, after_apply=True)  # applied, the answer lost: re-sent, idempotent
    es.faults.reject_items(pushed_back, times=2)
    es.faults.refuse_items(doomed)
    first = world.run()
    assert all(s["success"] and s["complete"] for s in first.status.values()), \
        "the sink rode out the outage inside the first run (refused documents are accounted, not failures)"
    assert es.faults.pending() == [], "every armed request fault and per-item 429 was met (and retried)"
    assert _pending_ids(world) == sorted(doomed), "exactly the refused documents are dead-lettered"
    after_first = take_snapshot(world.lake, node)
    assert set(after_first.index_records) == set(clean.records) - set(doomed), \
        "after the first run the index holds everything but the refused documents"
    es.faults.clear()
    world.run_until_done(max_runs=3)
    assert set(take_snapshot(world.lake, node).records) == set(clean.records), "the lake lost nothing"
    with es_cluster.resource(fault_proxy.url).get_client() as client:
        report = replay_deadletters(client, world.lake.root)
    assert report.replayed >= len(doomed) and report.still_failed == 0
    assert _pending_ids(world) == []
    assert differences(take_snapshot(world.lake, node), clean) == []


def test_source_errors_recover_without_loss_and_spare_the_other_source(clean, scratch, x_server, es_cluster):
    world = SyncWorld(scratch / "faulted", x_server.url, es_cluster.url, None, telegram_messages=400,
                      x_pages_per_run=500, telegram_pages_per_run=200)
    x_server.set_limit("users/tweets", 10_000, 3.0)  # a 429's reset header is then seconds away, not 15 min
    for kind, after in (("503", 0), ("500", 1), ("timeout", 2), ("drop", 3), ("malformed", 4), ("429", 5)):
        x_server.inject(kind, "users/tweets", after=after)
    first = world.run()
    assert first.status[TG_KEY]["success"] and first.status[TG_KEY]["complete"], "the Telegram source is unaffected"
    assert {429, 500, 503} <= set(x_server.statuses()), "the source's errors were met"
    assert not [f for f in x_server.faults if f.times], "every armed source fault was met"
    world.run_until_done(max_runs=4)
    assert differences(take_snapshot(world.lake, es_cluster.client), clean) == []


@pytest.fixture
def own_postgres():
    """A PostgreSQL server of this test's own: it is stopped and started mid-run, which would break every
    other test using the shared server of CRAWL_TEST_PG_URL."""
    folder = Path(tempfile.mkdtemp(prefix="crawl-pg-"))
    try:
        with private_postgres(folder) as server:
            yield server
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.skipif(postgres_bin() is None, reason="needs PostgreSQL's server binaries (initdb)")
def test_postgres_restart_mid_run_converges(clean, scratch, x_server, es_cluster, own_postgres):
    pg_url = own_postgres.url
    world = SyncWorld(scratch / "pg", x_server.url, es_cluster.url, None, telegram_messages=400,
                      x_pages_per_run=2, telegram_pages_per_run=2)
    home = scratch / "pg" / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text(f"storage:\n  postgres:\n    postgres_url: {pg_url}\n"
                                       "telemetry:\n  enabled: false\n")

    first_batch = world.lake.path(f"raw/{TENANT}/x/{X_KEY}")
    window: dict[str, float] = {}

    def restart_once_the_run_is_writing() -> None:
        deadline = time.monotonic() + 120
        while not world.lake.fs.exists(first_batch) and time.monotonic() < deadline:
            time.sleep(0.02)
        window["restart_began"] = time.monotonic()
        own_postgres.stop()
        time.sleep(3.0)  # down long enough that the run's event writes meet the outage
        own_postgres.start()
        window["restarted"] = time.monotonic()

    restarter = threading.Thread(target=restart_once_the_run_is_writing)
    restarter.start()
    first = world.run()
    window["first_run_ended"] = time.monotonic()
    restarter.join()
    for _ in range(30):
        if own_postgres.ready():
            break
        time.sleep(1)
    assert window["restart_began"] < window["first_run_ended"], "the outage began during the first run"
    assert first.returncode in (0, 1)
    # the first run (small pages: still writing when the server goes) met the outage; the rest is fetched in
    # whole runs, as the clean sync's
    world.x_pages_per_run, world.telegram_pages_per_run = 500, 200
    world.run_until_done(max_runs=12)
    assert differences(take_snapshot(world.lake, es_cluster.client), clean) == []
    import sqlalchemy as sa

    engine = sa.create_engine(pg_url)
    with engine.connect() as conn:
        runs = conn.execute(sa.text("SELECT count(*) FROM runs")).scalar()
    engine.dispose()
    assert runs and runs >= 2 * len(world.runs), "the runs were recorded in the PostgreSQL instance"
