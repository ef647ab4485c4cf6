"""A canary secret in every credential variable; after the demo samples, a live sync, a failure and a
retry, it appears nowhere: logs, the instance's storage (SQLite and Postgres, every column, compressed
snapshots and event bodies included), run config, tags, the lake, the index."""

from __future__ import annotations

import gzip
import logging
from pathlib import Path

import dagster as dg
import pytest

from crawl_assets import settings
from crawl_assets.cli.demo import register_samples
from crawl_assets.registry import SourceEntry, update_registry
from crawl_assets_tests.es_node.inspect import sources
from crawl_assets_tests.secrets.storage import postgres_hits, sqlite_hits
from crawl_assets_tests.standins.x_api import XAPIServer
from crawl_assets_tests.standins.x_corpus import build_corpus

CANARY = "CANARYc4n4ry7e57s3cr3t"
SECRET_VARS = ["CRAWL_X_BEARER_TOKEN", "CRAWL_X_BEARER_TOKEN__DEMO", "CRAWL_X_BEARER_TOKEN__DEMO__ALT",
               "CRAWL_TELEGRAM_API_HASH", "CRAWL_TELEGRAM_SESSION", "CRAWL_TELEGRAM_API_HASH__DEMO__ALT",
               "CRAWL_TELEGRAM_SESSION__DEMO__ALT", "CRAWL_INTERCOM_ACCESS_TOKEN__DEMO", "CRAWL_INTERCOM_WEBHOOK_SECRET__DEMO",
               "CRAWL_ES_API_KEY", "CRAWL_ES_PASSWORD", "DAGSTER_PG_PASSWORD"]


def _run(key: str) -> dg.ExecuteInProcessResult:
    from crawl_assets.definitions import build_definitions

    with dg.DagsterInstance.get() as instance:
        platform = key.split(".")[1]
        if key not in instance.get_dynamic_partitions(f"{platform}_sources"):
            instance.add_dynamic_partitions(f"{platform}_sources", [key])
        job = build_definitions().resolve_job_def(f"{platform}_sync")
        return job.execute_in_process(partition_key=key, instance=instance, raise_on_error=False)


def _lake_bytes(root: Path) -> list[tuple[Path, bytes]]:
    out = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            out.append((path, gzip.decompress(data) if path.suffix == ".gz" else data))
    return out


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def storage(request, dagster_home) -> str | None:
    """The instance storage of the run: SQLite under DAGSTER_HOME, or a fresh Postgres database."""
    return request.getfixturevalue("pg_url") if request.param == "postgres" else None


def test_canary_secret_never_leaks(dagster_home, storage, monkeypatch, capfd, caplog, es_cluster):
    if es_cluster.env().keys() - {"CRAWL_ES_URL"}:
        pytest.skip("the canary is the cluster credential here: needs a test cluster without security")
    caplog.set_level(logging.DEBUG)
    for var in SECRET_VARS:
        monkeypatch.setenv(var, CANARY)
    monkeypatch.setenv("CRAWL_TELEGRAM_API_ID", "12345")
    if storage:
        monkeypatch.setenv("DAGSTER_PG_URL", storage)
    with XAPIServer(build_corpus(300, days=5), tokens={CANARY}) as x:
        monkeypatch.setenv("CRAWL_X_BASE_URL", x.url)
        monkeypatch.setenv("CRAWL_ES_URL", es_cluster.url)
        keys = register_samples(settings.registry_path())
        live = SourceEntry(name="live", tenant="demo", platform="x", kind="account_timeline", identifier="data_eng")
        update_registry(settings.registry_path(), lambda reg: reg.add(live))

        assert all(_run(k).success for k in keys), "the demo samples"
        x.inject("503", "users/tweets", times=2)  # retried in place by the client
        assert _run(live.key).success, "a live sync with retries"
        x.inject("401", "users/tweets")  # a refused credential: the source is paused, the run fails
        x.clear_log()
        assert not _run(live.key).success, "a failure"

        with dg.DagsterInstance.get() as instance:
            runs = instance.get_runs()
            assert len(runs) == len(keys) + 2
            for run in runs:
                assert CANARY not in str(run.run_config) and CANARY not in str(run.tags)
                for entry in instance.all_logs(run.run_id):
                    assert CANARY not in str(entry)
        docs = [*sources(es_cluster.client, "crawl-records-*").values(),
                *sources(es_cluster.client, "crawl-edges-*").values()]
        assert docs and CANARY not in str(docs)

    leaks = [str(p) for p, data in _lake_bytes(Path(settings.lake_root())) if CANARY.encode() in data]
    assert not leaks, leaks
    out, err = capfd.readouterr()
    assert CANARY not in out + err and CANARY not in caplog.text

    stored, tables = postgres_hits(storage, CANARY) if storage else sqlite_hits(dagster_home, CANARY)
    assert {"runs", "event_logs", "snapshots"} <= tables, tables  # compressed snapshots were searched
    assert not stored, f"the canary is in the instance's storage: {stored}"
