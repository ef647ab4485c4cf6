"""Which sources are in a queued or running run right now, read from the instance in one query.

A source counts as in flight whether its run came from a scheduler batch (the op config lists it),
a single-source run or a multi-run backfill (``dagster/partition`` tag), or a single-run range backfill
(range tags, resolved against the partition order).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import dagster as dg

from crawl_assets.orchestration.run_names import BATCH_CONFIG_FIELD, PLATFORM_TAG, batch_op_name
from crawl_assets.registry import SourceEntry

ACTIVE_STATUSES = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]
PARTITION_TAG = "dagster/partition"
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


@dataclass
class InFlight:
    sources: set[str] = field(default_factory=set)
    own_runs: int = 0  # runs of this platform's sync jobs (what the scheduler's run budget counts)
    credential_runs: Counter[str] = field(default_factory=Counter)


def run_sources(run: dg.DagsterRun, platform: str, partition_order: Sequence[str]) -> set[str]:
    """The source keys of ``platform`` a run works on."""
    tags = run.tags
    out: set[str] = set()
    key = tags.get(PARTITION_TAG)
    if key:
        out.add(key)
    start, end = tags.get(RANGE_START_TAG), tags.get(RANGE_END_TAG)
    if start and end and start in partition_order and end in partition_order:
        i, j = partition_order.index(start), partition_order.index(end)
        out.update(partition_order[min(i, j):max(i, j) + 1])
    ops = (run.run_config or {}).get("ops", {})
    for name in (batch_op_name(platform, True), batch_op_name(platform, False)):
        out.update(((ops.get(name) or {}).get("config") or {}).get(BATCH_CONFIG_FIELD) or [])
    return {k for k in out if k.split(".", 2)[1:2] == [platform]}


def in_flight(instance: dg.DagsterInstance, platform: str, partition_order: Sequence[str],
              by_key: Mapping[str, SourceEntry], limit: int = 1000) -> InFlight:
    result = InFlight()
    for record in instance.get_run_records(dg.RunsFilter(statuses=ACTIVE_STATUSES), limit=limit):
        run = record.dagster_run
        keys = run_sources(run, platform, partition_order)
        result.sources |= keys
        if run.tags.get(PLATFORM_TAG) == platform:
            result.own_runs += 1
            for cred in {(by_key[k].credential or "") for k in keys if k in by_key}:
                result.credential_runs[cred] += 1
    return result
