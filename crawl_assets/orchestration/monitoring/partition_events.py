"""What a source's partition shows in the UI when a sync of it fails, in every kind of run.

The partitions page of an asset derives each partition's state from the instance's event log: a partition
is *Failed* when its latest event is an ``ASSET_MATERIALIZATION_PLANNED`` of a run that ended failed,
*In progress* while that run is going, and the failed run is the partition's ``latestRunForPartition``
(linked from the partition's detail). Dagster writes these planned events itself when it creates a
run with a ``dagster/partition`` tag. A batch run (``{platform}_sync_batch``) names its sources in op
config instead, so Dagster plans nothing for them and a failed source used to read as *Missing*; the
batch op therefore writes the same planned event for each source's step just before running it
(:func:`plan_materialization`). A source that fails is then Failed on the page as soon as its batch run
ends (failed), and one that succeeds is Materialized as before.

Each failure is also recorded as an ``AssetObservation`` of the partition (:func:`report_failure`): the
partition's detail then shows the reason, the failed run (a link) and, for a paused source, the pause
reason. Checkpoints are observations of the raw partition too; ``crawl_assets.orchestration.partition_state`` reads past
failure observations to the latest checkpoint.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import dagster as dg

from crawl_assets.orchestration.monitoring.health import record_failure
from crawl_assets.registry.models import redact_secrets

FAILURE_KEY = "sync_failed"  # the observation metadata naming a failure (never a checkpoint)
MAX_REASON = 2000


@dataclass(frozen=True)
class SyncFailure:
    """One failed sync attempt of a source, as health, logs and the partition show it."""

    message: str
    retry_after: float | None = None  # epoch seconds: the server asked us to wait until then
    paused_reason: str | None = None  # the source was paused (a configuration or permission error)

    def __post_init__(self) -> None:  # server text may echo a credential: never stored as is
        object.__setattr__(self, "message", redact_secrets(self.message, MAX_REASON))
        if self.paused_reason is not None:
            object.__setattr__(self, "paused_reason", redact_secrets(self.paused_reason, MAX_REASON))

    @classmethod
    def of(cls, exc: BaseException, *, where: str = "", now: float | None = None) -> "SyncFailure":
        prefix = f"{where}: " if where else ""
        if isinstance(exc, dg.RetryRequested):
            wait = float(exc.seconds_to_wait or 0)
            return cls(f"{prefix}waiting {wait:.0f}s: {exc.__cause__ or 'retry requested'}",
                       retry_after=(now or time.time()) + wait)
        if isinstance(exc, dg.Failure):
            paused = (exc.metadata or {}).get("paused_reason")
            return cls(prefix + (exc.description or "failure"),
                       paused_reason=str(getattr(paused, "value", paused)) if paused is not None else None)
        return cls(f"{prefix}{type(exc).__name__}: {exc}")


def report_failure(context: dg.OpExecutionContext, asset_key: dg.AssetKey, partition: str, failure: SyncFailure,
                   *, record_health: bool = True) -> None:
    """Record the failure in the source's health (for the scheduler and ``status``) and on the partition."""
    run_id = context.run.run_id
    if record_health:
        record_failure(context.instance, partition, failure.message, run_id=run_id, retry_after=failure.retry_after)
    metadata: dict[str, dg.RawMetadataValue] = {
        FAILURE_KEY: failure.message[:MAX_REASON],
        "failed_run": dg.MetadataValue.dagster_run(run_id),
    }
    if failure.paused_reason:
        metadata["paused"] = (f"{failure.paused_reason[:MAX_REASON]} "
                              f"(resume: crawl-assets sources resume {partition})")
    if failure.retry_after:
        metadata["retry_after"] = dg.MetadataValue.timestamp(failure.retry_after)
    context.log_event(dg.AssetObservation(asset_key=asset_key, partition=partition, metadata=metadata))


def plan_materialization(context: dg.OpExecutionContext, asset_key: dg.AssetKey, partition: str) -> None:
    """Write the ``ASSET_MATERIALIZATION_PLANNED`` event Dagster writes at run creation for a partition
    a run targets, for a partition a batch op is about to materialize (see the module's docstring)."""
    from dagster._core.events import AssetMaterializationPlannedData, DagsterEvent

    event = DagsterEvent.build_asset_materialization_planned_event(
        context.run.job_name, context.get_step_execution_context().step.key,
        AssetMaterializationPlannedData(asset_key, partition=partition),
    )
    context.instance.report_dagster_event(event, run_id=context.run.run_id, log_level=logging.DEBUG)
