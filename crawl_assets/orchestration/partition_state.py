"""What a step keeps on its source's partition in the Dagster instance: the collector's checkpoint (an
observation of the raw partition) and the derived assets' check results (evaluations of their partitions).

The checkpoint (progress inside a run) and the cursor (state between runs) are one small JSON document, saved
as an ``AssetObservation`` of the raw asset's partition. An observation is persisted at once, so a run killed
at any point resumes from the last one saved; and it lives in the instance (SQLite or Postgres), not in the
sensor cursor, which is only a scheduling aid. Collectors save only after the data it covers is committed to
the lake, so a checkpoint never points past data that could be lost.

Each check is partitioned like its asset (a result names the source it checked; the UI lists the failing
partitions). The sync jobs do not plan them: Dagster marks a planned check *Execution failed* when its run
fails, so a source failing its raw step would fail the checks of assets it never reached, and before they
were partitioned, every source's. The step instead reports each result as an evaluation of its partition
right after its materialization, in single runs and batch runs alike; a run that selects a check (the UI's
*Materialize* on an asset) gets it the usual way, in the step's ``check_results``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from typing import AbstractSet, Any

import dagster as dg
import orjson

from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS


# -- the checkpoint ------------------------------------------------------------------------------------------
CHECKPOINT_KEY = "checkpoint"
MAX_BYTES = 16_384  # cursors must stay small: per-item state belongs in the lake
PAGE = 10  # observations read per query while looking for the newest checkpoint


def load_checkpoint(instance: dg.DagsterInstance, asset_key: dg.AssetKey, partition: str) -> dict[str, Any]:
    """The newest saved state of a source, or ``{}`` when it was never synced.

    Other observations of the partition (a failed sync's reason, ``monitoring.partition_events``) are
    skipped: the newest observation that carries a checkpoint wins."""
    records_filter = dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition])
    cursor = None
    while True:
        page = instance.fetch_observations(records_filter, limit=PAGE, cursor=cursor)
        for record in page.records:
            obs = record.asset_observation
            if obs is not None and CHECKPOINT_KEY in obs.metadata:
                value = obs.metadata[CHECKPOINT_KEY].value
                return dict(value) if isinstance(value, dict) else {}
        if not page.has_more:
            return {}
        cursor = page.cursor


class ObservationCheckpointer:
    """Load and save the state of the partition a raw asset is materializing: the ``crawl_assets.sdk.sync.Checkpointer``
    the raw step gives a live collector."""

    def __init__(self, context: dg.AssetExecutionContext):
        self._context = context
        self.asset_key = context.asset_key
        self.partition = context.partition_key
        self.saves = 0

    def load(self) -> dict[str, Any]:
        return load_checkpoint(self._context.instance, self.asset_key, self.partition)

    def save(self, state: dict[str, Any], **metadata: Any) -> None:
        """Persist ``state`` now. Call only after the data it covers is in the lake."""
        size = len(orjson.dumps(state))
        if size > MAX_BYTES:
            raise ValueError(f"checkpoint of {self.partition} is {size} bytes; keep it under {MAX_BYTES}")
        self._context.log_event(
            dg.AssetObservation(
                asset_key=self.asset_key,
                partition=self.partition,
                metadata={CHECKPOINT_KEY: dg.MetadataValue.json(state), **metadata},
            )
        )
        self.saves += 1


# -- the checks ----------------------------------------------------------------------------------------------
def source_check(platform: str, name: str, asset: dg.AssetKey, **kwargs: Any) -> dg.AssetCheckSpec:
    """A check of one source's partition of ``asset`` (Dagster 1.13 marks partitioned checks a preview: its
    warning would print at every load of the definitions, the CLI's included)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.AssetCheckSpec(name, asset=asset, partitions_def=SOURCE_PARTITIONS[platform], **kwargs)


def latest_materialization(instance: dg.DagsterInstance, asset_key: dg.AssetKey,
                           partition: str) -> Any:
    """What an evaluation targets: the partition's newest materialization (``None`` before the first)."""
    from dagster._core.definitions.asset_checks.asset_check_evaluation import (
        AssetCheckEvaluationTargetMaterializationData,
    )

    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition]), limit=1).records
    if not records:
        return None
    record = records[0]
    return AssetCheckEvaluationTargetMaterializationData(
        storage_id=record.storage_id, run_id=record.event_log_entry.run_id, timestamp=record.timestamp)


def evaluations(instance: dg.DagsterInstance, asset_key: dg.AssetKey, partition: str,
                results: Iterable[dg.AssetCheckResult], blocking: AbstractSet[str]) -> list[dg.AssetCheckEvaluation]:
    """``results`` as evaluations of ``partition``, targeting its newest materialization (log them after it)."""
    results = list(results)
    if not results:
        return []
    target = latest_materialization(instance, asset_key, partition)
    return [dg.AssetCheckEvaluation(
        asset_key=r.asset_key or asset_key, check_name=r.check_name or "", passed=r.passed, metadata=r.metadata,
        target_materialization_data=target, severity=r.severity, description=r.description,
        blocking=(r.check_name in blocking), partition=partition) for r in results]


def materialize_with_checks(context: dg.AssetExecutionContext, result: dg.MaterializeResult | None,
                            asset_key: dg.AssetKey | None = None) -> Iterator[Any]:
    """An asset body's events: the materialization (with the results of the checks the run selected), then
    the other results as evaluations of the partition. A failed blocking check fails the step after them,
    so the source's later steps do not run."""
    if result is None:
        return
    key = asset_key or result.asset_key or context.asset_key
    selected = context.selected_asset_check_keys
    own, others = [], []
    for check in result.check_results or ():
        (own if dg.AssetCheckKey(check.asset_key or key, check.check_name or "") in selected else others).append(check)
    yield dg.MaterializeResult(asset_key=result.asset_key, metadata=result.metadata, check_results=own,
                               data_version=result.data_version, tags=result.tags)
    blocking = {spec.name for spec in context.assets_def.check_specs if spec.blocking and spec.asset_key == key}
    yield from evaluations(context.instance, key, context.partition_key, others, blocking)
