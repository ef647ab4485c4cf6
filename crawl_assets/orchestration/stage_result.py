"""A plain stage (``pipeline/stage.py``) run as a step: its context from the step's env, its report turned into
a ``MaterializeResult`` with its checks, its notes on the source shown on the raw partition."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dagster as dg

from crawl_assets.core import catalog
from crawl_assets.orchestration.steps import StepEnv
from crawl_assets.pipeline.stage import MetadataPath, StageContext, StageReport


def stage_context(env: StepEnv, *, cluster: Any = None) -> StageContext:
    return StageContext(lake=env.resources.lake.lake(), source=env.partition_key, run_id=env.run.run_id, log=env.log,
                        cluster=cluster, previous=lambda name: previous_value(env, name))


def run_stage(platform: str, env: StepEnv, stage: Callable[[str, StageContext], StageReport | None], *,
              cluster: Any = None, keyed: bool = False,
              metadata: Callable[[StageContext, StageReport], dict[str, Any]] | None = None
              ) -> dg.MaterializeResult | None:
    """``stage`` run for the step's source. ``keyed``: the result and its checks name the step's asset key;
    ``metadata``: the step's own metadata added to the report's (a Dagster-only view)."""
    ctx = stage_context(env, cluster=cluster)
    report = stage(platform, ctx)
    if report is None:
        return None
    if report.source_notes:
        env.log_event(dg.AssetObservation(asset_key=dg.AssetKey([platform, catalog.spec(platform).raw_asset]),
                                          partition=env.partition_key, metadata=report.source_notes))
    shown = metadata(ctx, report) if metadata is not None else report.metadata
    return materialize_result(report, shown, env.asset_key if keyed else None)


def materialize_result(report: StageReport, metadata: dict[str, Any], asset_key: dg.AssetKey | None
                       ) -> dg.MaterializeResult:
    return dg.MaterializeResult(
        asset_key=asset_key,
        metadata={k: dg.MetadataValue.path(v.path) if isinstance(v, MetadataPath) else v for k, v in metadata.items()},
        check_results=[dg.AssetCheckResult(check_name=c.name, asset_key=asset_key, passed=c.passed,
                                           metadata=c.metadata, description=c.description)
                       for c in report.checks],
    )


def previous_value(env: StepEnv, name: str) -> Any:
    """Metadata ``name`` of the partition's previous materialization of the step's asset (None without one)."""
    records = env.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=env.asset_key, asset_partitions=[env.partition_key]), limit=1).records
    if not records or records[0].asset_materialization is None:
        return None
    value = records[0].asset_materialization.metadata.get(name)
    return value.value if value is not None else None
