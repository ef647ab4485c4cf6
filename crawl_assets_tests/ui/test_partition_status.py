"""Every source's true state on the partitions page, through the real webserver's GraphQL API.

After a batch run in which one source failed (``ui_stack``): the failing source's raw partition is
*Failed* (not Missing), the healthy ones are Materialized, the failed batch run is the partition's
latest run (what the UI links from the partition), and the partition carries the failure's reason; the
derived assets of the failed source were never attempted, so they read as unmaterialized, not failed.
"""

from __future__ import annotations

import json

from crawl_assets_tests.ui.conftest import DEGRADED, EXPORTS, FAILING, PAUSED

STATUSES = """query($path: [String!]!, $partition: String!) {
  assetNodeOrError(assetKey: {path: $path}) { ... on AssetNode {
    assetPartitionStatuses { ... on DefaultPartitionStatuses {
      materializedPartitions failedPartitions unmaterializedPartitions materializingPartitions } }
    latestRunForPartition(partition: $partition) { id status }
    assetObservations(partitions: [$partition], limit: 5) {
      runId metadataEntries { label ... on TextMetadataEntry { text } ... on PipelineRunMetadataEntry { runId } } }
  } } }"""


def _node(stack, *path: str, partition: str = FAILING) -> dict:
    return stack.graphql(STATUSES, {"path": list(path), "partition": partition})["assetNodeOrError"]


def test_a_source_failing_inside_a_batch_reads_failed_with_its_run_and_reason(ui_stack):
    raw = _node(ui_stack, "x", "x_posts_raw")
    status = raw["assetPartitionStatuses"]
    assert sorted(status["failedPartitions"]) == sorted([FAILING, PAUSED])
    assert {*EXPORTS, DEGRADED} <= set(status["materializedPartitions"])
    assert FAILING not in status["materializedPartitions"] and not status["materializingPartitions"]
    assert raw["latestRunForPartition"] == {"id": ui_stack.batch_run_id, "status": "FAILURE"}

    [failure] = [o for o in raw["assetObservations"] if any(e["label"] == "sync_failed" for e in o["metadataEntries"])]
    entries = {e["label"]: e for e in failure["metadataEntries"]}
    assert "CRAWL_X_BEARER_TOKEN" in entries["sync_failed"]["text"]
    assert "CRAWL_X_BEARER_TOKEN" in entries["paused"]["text"] and "sources resume" in entries["paused"]["text"]
    assert entries["failed_run"]["runId"] == ui_stack.batch_run_id == failure["runId"]

    # The healthy sources of the same failed run stay Materialized, with that run as their latest.
    healthy = _node(ui_stack, "x", "x_posts_raw", partition=EXPORTS[0])
    assert healthy["latestRunForPartition"]["id"] == ui_stack.batch_run_id

    # Steps never attempted for the failed source are not reported as failed.
    for asset in ("normalized_records", "relation_edges"):
        derived = _node(ui_stack, "x", asset)["assetPartitionStatuses"]
        assert FAILING in derived["unmaterializedPartitions"] and not derived["failedPartitions"]
        assert set(EXPORTS) <= set(derived["materializedPartitions"])


def test_status_shows_the_pause_and_its_reason(ui_stack):
    result = ui_stack.cli("status", "--json", "--platform", "x")
    assert result.returncode == 0, result.stderr
    rows = {r["key"]: r for r in map(json.loads, result.stdout.splitlines())}
    assert rows[FAILING]["state"] == "paused" and "CRAWL_X_BEARER_TOKEN" in rows[FAILING]["paused_reason"]
    assert rows[PAUSED]["state"] == "paused" and "Mars/Olympus" in rows[PAUSED]["paused_reason"]
    assert all(rows[k]["state"] == "ok" for k in EXPORTS)
    assert rows[DEGRADED]["state"] == "degraded" and "unexpected end of data" in rows[DEGRADED]["normalization_problem"]


def test_a_paused_source_that_synced_before_shows_the_reason_on_its_partition(ui_stack):
    """The partition page lists the metadata of the latest materialization and of the observations after it."""
    raw = _node(ui_stack, "x", "x_posts_raw", partition=PAUSED)
    [failure] = [o for o in raw["assetObservations"] if any(e["label"] == "paused" for e in o["metadataEntries"])]
    paused = {e["label"]: e for e in failure["metadataEntries"]}["paused"]["text"]
    assert "Mars/Olympus" in paused and f"crawl-assets sources resume {PAUSED}" in paused


CHECKS = """query($path: [String!]!) { assetNodeOrError(assetKey: {path: $path}) { ... on AssetNode {
  assetChecksOrError { ... on AssetChecks { checks { name
    partitionStatuses { ... on AssetCheckDefaultPartitionStatuses {
      succeededPartitions failedPartitions executionFailedPartitions inProgressPartitions } } } } } } } }"""


def _checks(stack, *path: str) -> dict[str, dict]:
    node = stack.graphql(CHECKS, {"path": list(path)})["assetNodeOrError"]
    return {c["name"]: c["partitionStatuses"] for c in node["assetChecksOrError"]["checks"]}


def test_each_check_names_the_sources_it_failed_and_no_sibling_fails_it(ui_stack):
    """Items 4 and 5 of issue 31: per source, in the real webserver's view of the batch run's results."""
    checks = {**_checks(ui_stack, "x", "normalized_records"), **_checks(ui_stack, "x", "relation_edges")}
    assert set(checks) == {"no_duplicate_keys", "records_match_schema", "no_failed_batches", "edge_sources_exist"}
    for name, status in checks.items():
        assert not status["executionFailedPartitions"] and not status["inProgressPartitions"], (name, status)
        failed = [DEGRADED] if name == "no_failed_batches" else []
        assert status["failedPartitions"] == failed, (name, status)
        assert {*EXPORTS} <= set(status["succeededPartitions"]) and FAILING not in status["succeededPartitions"]
