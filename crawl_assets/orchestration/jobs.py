"""Sync jobs per platform: one source per run (``{platform}_sync``), and many sources per run
(``{platform}_sync_batch``) so 10,000 sources are not capped by a queued run's ~5 s of overhead.

Both run in-process: a run then costs seconds instead of a subprocess per step.

The batch job runs, for each source in turn, the very same step functions the assets of ``{platform}_sync`` run
(raw → normalized_records → relation_edges → search_index), under the source's lock. Before each step it
writes the materialization-planned event Dagster writes for a partitioned run, and it reports the step
as a materialization (and its checks) of that source's partition, so the partitions page shows each
source as in progress, materialized or failed exactly as for single runs
(``crawl_assets.orchestration.monitoring.partition_events``). A source that fails stops only its own chain: its
checkpoint stays where its last stored page left it, the failure is recorded on its partition, the
other sources go on, and the run ends failed naming it; the scheduler then retries it alone in a
``{platform}_sync`` run, where the step retry policy applies.
"""


import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import AbstractSet, Any

import dagster as dg

from crawl_assets.orchestration.assets import derived_steps, raw_step
from crawl_assets.orchestration.monitoring.health import load_health, mark_pending
from crawl_assets.orchestration.monitoring.partition_events import SyncFailure, plan_materialization, report_failure
from crawl_assets.orchestration.run_names import BATCH_CONFIG_FIELD, PLATFORM_TAG, batch_op_name, sync_job_name
from crawl_assets.orchestration.partition_state import evaluations
from crawl_assets.orchestration.assets.chain import StepEnv, StepFn
from crawl_assets.locks.shared import SourceBusy, source_lock



def build_sync_job(platform: str, raw: dg.AssetsDefinition, *, include_index: bool = True) -> "dg.UnresolvedAssetJobDefinition":
    # enrichment assets (and the tenant-wide tables after them) are downstream too, but run by their own job
    # (crawl_assets.orchestration.assets.enrichment, enrichment_tenant)
    # the checks are not planned: each step records its results on its source's partition (partition_state)
    selection = (dg.AssetSelection.assets(raw).downstream()
                 - dg.AssetSelection.key_prefixes([platform, "enrichment"], ["enrichment"])).without_checks()
    name = sync_job_name(platform, include_index)
    if not include_index:
        selection = selection - dg.AssetSelection.assets(dg.AssetKey([platform, "search_index"]))
    return dg.define_asset_job(
        name=name,
        selection=selection,
        executor_def=dg.in_process_executor,
        tags={PLATFORM_TAG: platform},
        description=f"Sync one {platform} source: collect, normalize, relate"
        + (", index." if include_index else " (no index step)."),
    )


@dataclass(frozen=True)
class Step:
    """One asset of a source's chain: its plain step function and the checks it reports."""

    key: dg.AssetKey
    run: StepFn
    check_keys: AbstractSet[dg.AssetCheckKey]
    blocking_checks: frozenset[str]

    @classmethod
    def of(cls, assets_def: dg.AssetsDefinition, run: StepFn) -> "Step":
        blocking = frozenset(s.name for s in assets_def.check_specs if s.blocking)
        return cls(assets_def.key, run, assets_def.check_keys, blocking)


@dataclass
class Outcome:
    key: str
    status: str  # "ok" | "failed" | "busy" | "fresh" (synced by another run since the batch began)
    detail: str = ""
    seconds: float = 0.0


def step_result(value: Any) -> dg.MaterializeResult | None:
    """What a step produced: a result, or ``None`` for an optional output not materialized (its downstream
    steps then do not run)."""
    if value is not None and not isinstance(value, dg.MaterializeResult):
        raise TypeError(f"a sync step produced {type(value).__name__}, expected MaterializeResult")
    return value


def _report(context: dg.OpExecutionContext, step: Step, key: str, result: dg.MaterializeResult) -> list[str]:
    """Log the step's result as a materialization of ``key`` and its checks as evaluations of that partition;
    return the failed blocking checks."""
    context.log_event(dg.AssetMaterialization(asset_key=step.key, partition=key, metadata=dict(result.metadata or {})))
    failed: list[str] = []
    for check in evaluations(context.instance, step.key, key, result.check_results or (), step.blocking_checks):
        context.log_event(check)
        if not check.passed and check.blocking and check.severity == dg.AssetCheckSeverity.ERROR:
            failed.append(check.check_name)
    return failed


def synced_since(instance: dg.DagsterInstance, key: str, since: float) -> bool:
    """Whether another run completed a sync of ``key`` (raw data derived too) at or after ``since``."""
    health = load_health(instance, [key])[key]
    return bool(health.last_success and health.last_success >= since and not health.pending)


def run_created_at(context: dg.OpExecutionContext) -> float:
    """When this run was created (a scheduler's tick, for the runs a sensor requests), else now."""
    record = context.instance.get_run_record_by_id(context.run_id)
    return record.create_timestamp.timestamp() if record is not None else time.time()


def sync_one(context: dg.OpExecutionContext, steps: Sequence[Step], key: str, since: float | None = None) -> Outcome:
    """Run a source's chain in this process under its lock; never raises for the source's own errors.

    ``since`` (when the batch run was created): a source another run (on any machine) synced completely
    after it is left alone, as "fresh": runs handed overlapping batches never fetch a source twice in a row."""
    started = time.time()
    try:
        with source_lock(key, wait_seconds=0):
            if since is not None and synced_since(context.instance, key, since):
                context.log.info(f"{key}: synced by another run since this batch was requested; skipped")
                return Outcome(key, "fresh", "synced by another run since this batch was requested", time.time() - started)
            for step in steps:
                env = StepEnv.in_batch(context, step.key, key, step.check_keys)
                plan_materialization(context, step.key, key)
                try:
                    result = step_result(step.run(env))
                    failed_checks = _report(context, step, key, result) if result is not None else []
                except (dg.RetryRequested, dg.Failure, Exception) as exc:  # noqa: B014 - named for readers
                    failure = SyncFailure.of(exc, where=step.key.to_user_string())
                    if step is not steps[0]:  # the raw step reports its own failures
                        report_failure(context, step.key, key, failure)
                    context.log.error(f"{key}: {failure.message}")
                    return Outcome(key, "failed", failure.message, time.time() - started)
                if failed_checks:
                    failure = SyncFailure(f"{step.key.to_user_string()}: blocking check failed: {', '.join(failed_checks)}")
                    report_failure(context, step.key, key, failure)
                    context.log.error(f"{key}: {failure.message}; later steps skipped")
                    return Outcome(key, "failed", failure.message, time.time() - started)
                if result is None:  # an optional output not materialized (the step logged why)
                    break
                if step is steps[0] and not load_health(context.instance, [key])[key].pending:
                    return Outcome(key, "ok", "nothing new", time.time() - started)  # nothing to derive
            mark_pending(context.instance, key, load_health(context.instance, [key])[key], False)
    except SourceBusy as exc:
        context.log.warning(f"{exc}; skipped in this batch")
        return Outcome(key, "busy", str(exc), time.time() - started)
    return Outcome(key, "ok", "", time.time() - started)


def _pooled_connections(instance: dg.DagsterInstance, sources: int) -> None:
    """Keep database connections open for the rest of this run worker.

    A source's sync makes ~10-25 small writes (events, health); dagster-postgres opens a new connection
    for each by default (a forked Postgres backend each: half of a no-op sync's time on 2 cores). The
    webserver's pooled mode fits a long batch; storages without it (SQLite) ignore the call.
    """
    if sources < 5:
        return
    try:
        instance.optimize_for_webserver(statement_timeout=0, pool_recycle=3600, max_overflow=4)
    except NotImplementedError:
        pass


def build_batch_job(platform: str, assets: Sequence[dg.AssetsDefinition], *, include_index: bool = True,
                    resource_defs: Mapping[str, Any] | None = None) -> dg.JobDefinition:
    """``{platform}_sync_batch``: sync the sources listed in the op config one after another in one run.

    ``resource_defs``: the resources to bind (``definitions.py`` passes its own). A job whose resources
    ``Definitions`` must bind later makes Dagster 1.13 copy the sensors that name it, and that copy emits
    a BetaWarning about ``SensorDefinition`` owners we never set; tests bind theirs at execution."""
    chain = [a for a in assets if include_index or a.key != dg.AssetKey([platform, "search_index"])]
    derived = derived_steps(platform)
    steps = [Step.of(a, derived[a.key] if a.key in derived else raw_step(platform)) for a in chain]
    resource_keys = set().union(*(a.required_resource_keys for a in chain))

    @dg.op(name=batch_op_name(platform, include_index), required_resource_keys=resource_keys, pool=f"{platform}_sources",
           config_schema={BATCH_CONFIG_FIELD: dg.Field([str], description="Source keys to sync, in order.")},
           description=f"Sync several {platform} sources in turn, each isolated from the others' failures.")
    def _batch(context: dg.OpExecutionContext):
        since = run_created_at(context)
        _pooled_connections(context.instance, len(context.op_config[BATCH_CONFIG_FIELD]))
        outcomes = [sync_one(context, steps, key, since) for key in context.op_config[BATCH_CONFIG_FIELD]]
        failed = [o for o in outcomes if o.status == "failed"]
        busy = [o for o in outcomes if o.status in ("busy", "fresh")]
        context.log.info(f"batch of {len(outcomes)}: {len(outcomes) - len(failed) - len(busy)} synced, "
                         f"{len(failed)} failed, {len(busy)} busy or just synced elsewhere, "
                         f"{sum(o.seconds for o in outcomes):.1f}s in source chains")
        if failed:
            raise dg.Failure(
                f"{len(failed)} of {len(outcomes)} sources failed (the others were synced): "
                + "; ".join(f"{o.key}: {o.detail}" for o in failed[:20]),
                metadata={"failed_sources": [o.key for o in failed], "synced": len(outcomes) - len(failed) - len(busy)},
                allow_retries=False,
            )

    name = f"{platform}_sync_batch" + ("" if include_index else "_no_index")

    @dg.job(name=name, executor_def=dg.in_process_executor, tags={PLATFORM_TAG: platform, "crawl/batch": "true"},
            resource_defs={k: v for k, v in (resource_defs or {}).items() if k in resource_keys} or None,
            description=f"Sync many {platform} sources in one run (scheduler batches): "
            + " → ".join(a.key.path[-1] for a in chain) + " per source.")
    def _job() -> None:
        _batch()

    return _job
