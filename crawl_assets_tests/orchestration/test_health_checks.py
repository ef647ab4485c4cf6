"""The per-platform health checks: they evaluate every source, and skip (rather than pass) a platform
with no source registered."""

from __future__ import annotations

import time

import dagster as dg

from crawl_assets.definitions import build_definitions
from crawl_assets.orchestration.monitoring.health import record_failure
from crawl_assets_tests.orchestration.conftest import x_registry


def _latest(instance: dg.DagsterInstance, platform: str, asset: str, name: str):
    key = dg.AssetCheckKey(dg.AssetKey([platform, asset]), name)
    [record] = instance.event_log_storage.get_asset_check_execution_history(key, limit=1)
    return record


def test_checks_flag_failing_sources_and_skip_empty_platforms(tmp_path, instance):
    x_registry(tmp_path / "sources.yaml", {"a": "data_eng", "b": "persian_news"})
    for _ in range(3):
        record_failure(instance, "acme.x.b", "HTTP 500 from the API", now=time.time())
    result = build_definitions().resolve_job_def("source_health_checks").execute_in_process(instance=instance)
    assert result.success

    streaks = _latest(instance, "x", "sources", "no_failure_streaks")
    evaluation = streaks.event.dagster_event.event_specific_data
    assert evaluation.passed is False
    assert evaluation.metadata["failing_sources"].value == 1
    assert "acme.x.b: 3x: HTTP 500" in evaluation.metadata["examples"].value[0]
    fresh = _latest(instance, "x", "sources", "sources_fresh").event.dagster_event.event_specific_data
    assert fresh.metadata["sources"].value == 2 and fresh.metadata["never_synced"].value == 1

    # Discourse has no source: both of its checks were planned, not evaluated (Dagster shows them skipped).
    for name in ("sources_fresh", "no_failure_streaks"):
        record = _latest(instance, "discourse", "sources", name)
        assert record.status.value == "PLANNED" and record.run_id == result.run_id
