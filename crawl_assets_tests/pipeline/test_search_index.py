"""search_index against the protocol ES server: failures are dead-lettered in the lake, flagged by the
count check, and replayed by `crawl-assets es replay` until the index matches the normalized records."""

import subprocess
import sys
from pathlib import Path

import dagster as dg
from elasticsearch import Elasticsearch

from crawl_assets import settings
from crawl_assets.cli.demo import register_samples
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.es_server import ESTestServer

SOURCE = "demo.x.sample-search"


def checks(result) -> dict[str, bool]:
    return {
        e.event_specific_data.check_name: e.event_specific_data.passed
        for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"
    }


def test_item_failures_dead_lettered_then_replayed(dagster_home, monkeypatch):
    register_samples(settings.registry_path())
    lake = Lake(settings.lake_root())
    with ESTestServer() as server:
        monkeypatch.setenv("CRAWL_ES_URL", server.url)
        from crawl_assets.definitions import build_definitions

        instance = dg.DagsterInstance.get()
        instance.add_dynamic_partitions("x_sources", [SOURCE])
        job = build_definitions().resolve_job_def("x_sync")

        # Learn the keys, then make two of them fail with a mapping error (not retryable).
        assert job.execute_in_process(partition_key=SOURCE, instance=instance,
                                      asset_selection=[dg.AssetKey(["x", "x_posts_raw"]), dg.AssetKey(["x", "normalized_records"])]).success
        [(_, table)] = list(lake.read_parts("normalized_records", "demo", "x", SOURCE))
        keys = [r["key"] for r in arrow_to_records(table)]
        server.faults.fail_mapping(keys[:2])

        result = job.execute_in_process(partition_key=SOURCE, instance=instance, raise_on_error=False)
        assert result.success, "dead-lettered documents are accounted for, not a crash"
        got = checks(result)
        assert got["no_unaccounted_failures"] is True
        assert got["index_count_matches"] is False, "two documents are missing from the index"
        letters = list(Path(settings.lake_root(), "deadletter").rglob("*.jsonl*"))
        assert letters and all("deadletter/deadletter" not in str(p) for p in letters)

        server.faults.clear()
        replay = subprocess.run(
            [sys.executable, "-m", "crawl_assets.cli.main", "es", "replay", "--lake", settings.lake_root()],
            capture_output=True, text=True, timeout=120, cwd=REPO,
        )
        assert replay.returncode == 0, replay.stdout + replay.stderr
        client = Elasticsearch(server.url)
        client.indices.refresh(index="crawl-records-demo")
        assert client.count(index="crawl-records-demo")["count"] == len(set(keys))
