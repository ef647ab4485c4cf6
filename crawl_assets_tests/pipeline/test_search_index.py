"""search_index against the real Elasticsearch node: failures are dead-lettered in the lake, flagged by the
count check, and replayed by `crawl-assets es replay` until the index matches the normalized records."""

import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from crawl_assets import settings
from crawl_assets.cli.demo import register_samples
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.es_node.inspect import all_docs

SOURCE = "demo.x.sample-search"


def checks(result) -> dict[str, bool]:
    return {
        e.event_specific_data.check_name: e.event_specific_data.passed
        for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"
    }


@pytest.fixture
def sample_source(dagster_home, monkeypatch, es_cluster, fault_proxy):
    """(fault proxy in front of the node, lake, instance, x_sync job) with the sample X search registered;
    the runs reach the node through the proxy."""
    register_samples(settings.registry_path())
    for name, value in es_cluster.env(fault_proxy.url).items():
        monkeypatch.setenv(name, value)
    from crawl_assets.definitions import build_definitions

    # Entered, so the process-wide defs-state storage is this live instance's for the whole test (an
    # instance dropped without dispose by an earlier test left a dead one there: a flaky setup error).
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("x_sources", [SOURCE])
        yield fault_proxy, Lake(settings.lake_root()), instance, build_definitions().resolve_job_def("x_sync")


def test_item_failures_dead_lettered_then_replayed(sample_source, es_cluster):
    server, lake, instance, job = sample_source
    # Learn the keys, then make two of them fail with a mapping error (not retryable).
    assert job.execute_in_process(partition_key=SOURCE, instance=instance,
                                  asset_selection=[dg.AssetKey(["x", "x_posts_raw"]), dg.AssetKey(["x", "normalized_records"])]).success
    [(_, table)] = list(lake.read_parts("normalized_records", "demo", "x", SOURCE))
    keys = [r["key"] for r in arrow_to_records(table)]
    server.faults.refuse_items(keys[:2])

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
    assert len(all_docs(es_cluster.client, "crawl-records-demo")) == len(set(keys))


def _index_metadata(result) -> dict:
    [mat] = [m for m in result.asset_materializations_for_node("x__search_index")] or [None]
    return {k: v.value for k, v in mat.metadata.items()}


def test_a_sync_with_nothing_new_sends_nothing_and_edges_match_the_table(sample_source, es_cluster):
    """Edges are indexed with their records: the first sync sends every edge of the table, a sync with no
    new parts sends no document at all (neither records nor edges are re-sent)."""
    from crawl_assets.index.sink import edge_id

    server, lake, instance, job = sample_source
    first = _index_metadata(job.execute_in_process(partition_key=SOURCE, instance=instance))
    want = {edge_id(e) for _, table in lake.read_parts("relation_edges", "demo", "x", SOURCE)
            for e in arrow_to_records(table)}
    got = set(all_docs(es_cluster.client, "crawl-edges-demo"))
    assert want and got == want
    assert first["edges_created"] == len(want) and first["records_created"] > 0

    assert first["mode"] == "indexed" and server.stats["bulk requests"] > 0
    bulk_before = server.stats["bulk requests"]
    edge_files = sorted(Path(lake.path("tables/relation_edges/demo/x")).rglob("*.parquet"))
    written_before = [f.stat().st_mtime_ns for f in edge_files]
    result = job.execute_in_process(partition_key=SOURCE, instance=instance)
    again = _index_metadata(result)
    assert again["mode"] == "up_to_date" and again["parts_indexed"] == 0 and again["documents_sent"] == 0
    assert server.stats["bulk requests"] == bulk_before, "a sync with nothing new sends no bulk request"
    got = checks(result)
    assert got["no_unaccounted_failures"] and got["index_count_matches"] and got["edge_sources_exist"], got
    [edges_mat] = result.asset_materializations_for_node("x__relation_edges")
    assert edges_mat.metadata["mode"].value == "up_to_date" and [f.stat().st_mtime_ns for f in edge_files] == written_before


def test_parts_re_derived_by_a_new_normalizer_are_indexed_again(sample_source):
    """A new normalizer version rewrites parts under the same batch ids; their index markers name the old
    version, so the next sync sends those records again (and only then)."""
    server, lake, instance, job = sample_source
    assert job.execute_in_process(partition_key=SOURCE, instance=instance).success
    markers = lake.fs.glob(lake.path(f"index_state/demo/x/{SOURCE}/*.done"))
    assert markers
    for path in markers:  # as a marker written by an earlier normalizer version reads
        with lake.fs.open(path, "wb") as fh:
            fh.write(b"0123456789ab run-of-an-older-version")
    again = _index_metadata(job.execute_in_process(partition_key=SOURCE, instance=instance))
    assert again["parts_indexed"] == len(markers) and again["records_updated"] + again["records_noop"] == 150
    third = _index_metadata(job.execute_in_process(partition_key=SOURCE, instance=instance))
    assert third["parts_indexed"] == 0
