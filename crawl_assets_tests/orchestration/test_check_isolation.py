"""A source's checks speak for that source only: three X sources (two exports, one live timeline with no token
set), synced one run per source as a UI backfill does, then all three in one batch run. The failing source
fails its own runs; no check of any source reads failed or "execution failed" because of it, and each check's
result is recorded on the partition (the source) it checked."""

from __future__ import annotations

import dagster as dg
import pytest

from crawl_assets.cli.demo import sample_file
from crawl_assets.sdk.exports import tenant_import_root

SOURCES = {"archive": ("x_archive_tweets.js", "x-archive"), "search": ("x_v2_recording.jsonl", "x-v2")}
EXPORTS = [f"acme.x.{name}" for name in SOURCES]
FAILING = "acme.x.news"
CHECKED = [dg.AssetKey(["x", "normalized_records"]), dg.AssetKey(["x", "relation_edges"])]


@pytest.fixture
def three_sources(tmp_path, dagster_home):
    imports = tenant_import_root("acme")
    imports.mkdir(parents=True)
    lines = ["sources:"]
    for name, (sample, fmt) in SOURCES.items():
        (imports / sample).write_bytes(sample_file(sample).read_bytes())
        lines.append(f"  - {{name: {name}, tenant: acme, platform: x, kind: export_file, identifier: {sample}, "
                     f"options: {{format: {fmt}}}}}")
    lines.append("  - {name: news, tenant: acme, platform: x, kind: account_timeline, identifier: persian_news}")
    (tmp_path / "sources.yaml").write_text("\n".join(lines) + "\n")
    from crawl_assets.definitions import build_definitions

    defs = build_definitions()
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("x_sources", [*EXPORTS, FAILING])
        yield defs, instance


def check_states(defs: dg.Definitions, instance: dg.DagsterInstance) -> dict[dg.AssetCheckKey, dict[str, set]]:
    """Each check of the derived assets: its partitions by resolved status (``{None}``: an unpartitioned check)."""
    graph = defs.resolve_asset_graph()
    keys = [k for k in graph.asset_check_keys if k.asset_key in CHECKED]
    assert len(keys) >= 4
    from dagster._core.definitions.partitions.context import partition_loading_context

    with partition_loading_context(dynamic_partitions_store=instance):
        states = instance.event_log_storage.get_asset_check_state([(k, graph.get(k).partitions_def) for k in keys])
        return {key: _by_status(states[key]) for key in keys}


def _by_status(state) -> dict[str, set]:
    from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionResolvedStatus as Status

    out: dict[str, set] = {}
    for status in Status:
        subset = state.subsets.get(status)
        if subset is not None and not subset.is_empty:
            value = subset.value
            out[status.value] = {None} if isinstance(value, bool) else set(value.get_partition_keys())
    return out


def _assert_isolated(defs, instance) -> None:
    for key, by_status in check_states(defs, instance).items():
        name = key.to_user_string()
        assert not by_status.get("EXECUTION_FAILED") and not by_status.get("FAILED"), (name, by_status)
        assert by_status.get("SUCCEEDED") == set(EXPORTS), (name, by_status)


def test_a_failing_source_fails_no_check_of_its_siblings_in_single_runs(three_sources):
    defs, instance = three_sources
    job = defs.resolve_job_def("x_sync_no_index")
    for key in [*EXPORTS, FAILING]:  # the failing source last: its run is the newest
        result = job.execute_in_process(partition_key=key, instance=instance, raise_on_error=False)
        assert result.success is (key != FAILING)
    _assert_isolated(defs, instance)


def test_a_failing_source_fails_no_check_of_its_siblings_in_a_batch_run(three_sources):
    defs, instance = three_sources
    job = defs.resolve_job_def("x_sync_batch_no_index")
    result = job.execute_in_process(
        run_config={"ops": {"x_sync_sources_no_index": {"config": {"partitions": [*EXPORTS, FAILING]}}}},
        instance=instance, raise_on_error=False)
    assert not result.success
    _assert_isolated(defs, instance)


def test_a_pause_fails_its_run_naming_the_variable_without_a_chained_traceback(three_sources):
    """A configuration error is expected: the step failure says what to set, with no traceback of the collector
    that found it chained below it (the pause reason is also on the partition, ``test_partition_status``)."""
    defs, instance = three_sources
    result = defs.resolve_job_def("x_sync_no_index").execute_in_process(
        partition_key=FAILING, instance=instance, raise_on_error=False)
    [event] = instance.all_logs(result.run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
    error = event.dagster_event.step_failure_data.error
    assert "set CRAWL_X_BEARER_TOKEN__ACME" in error.message
    assert error.cause is None and error.context is None, "no chained traceback"
    assert not any("sources/x/" in frame for frame in error.stack), error.stack
