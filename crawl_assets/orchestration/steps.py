"""The steps of a source's chain as plain functions, run by the asset itself and by the batch op alike.

A step is ``step(env) -> MaterializeResult | None`` (``None``: an optional output not materialized; the step
logged why). ``StepEnv`` holds what a step may use of the run it runs in, taken from public context
attributes only: in an asset run from the asset's own context, in a batch run from the batch op's context
with the source's partition and the step's asset key. Nothing re-enters Dagster's step machinery.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import AbstractSet, Any

import dagster as dg


@dataclass(frozen=True)
class StepEnv:
    """One step of one source: the run (``run.run_id``, ``run.tags``, ``run.parent_run_id``), the instance,
    the log, the resources, and which asset, partition and checks the step materializes."""

    run: dg.DagsterRun
    instance: dg.DagsterInstance
    log: Any  # DagsterLogManager
    resources: Any
    log_event: Callable[[Any], None]
    asset_key: dg.AssetKey
    partition_key: str
    selected_asset_check_keys: AbstractSet[dg.AssetCheckKey]
    retry_number: int = 0

    @classmethod
    def of_asset(cls, context: dg.AssetExecutionContext) -> "StepEnv":
        """The env of an asset's own run (its retries counted)."""
        return cls(run=context.run, instance=context.instance, log=context.log, resources=context.resources,
                   log_event=context.log_event, asset_key=context.asset_key, partition_key=context.partition_key,
                   selected_asset_check_keys=context.selected_asset_check_keys, retry_number=context.retry_number)

    @classmethod
    def in_batch(cls, context: dg.OpExecutionContext, asset_key: dg.AssetKey, partition_key: str,
                 check_keys: AbstractSet[dg.AssetCheckKey]) -> "StepEnv":
        """The env of one source's step inside a batch op (a batch is never retried as a whole)."""
        return cls(run=context.run, instance=context.instance, log=context.log, resources=context.resources,
                   log_event=context.log_event, asset_key=asset_key, partition_key=partition_key,
                   selected_asset_check_keys=check_keys)


StepFn = Callable[[StepEnv], "dg.MaterializeResult | None"]
