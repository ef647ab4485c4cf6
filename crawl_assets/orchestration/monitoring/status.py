"""Each source's state as people see it (CLI table, asset checks): from the registry and the instance.

States: ``paused`` (reason in the registry), ``running`` (in a queued or running run), ``failing``
(last attempt failed; back-off applies), ``waiting`` (the server asked us to wait), ``late`` (due for
longer than one more interval), ``never`` (not synced yet), ``ok``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import dagster as dg

from crawl_assets.orchestration.monitoring.health import load_health
from crawl_assets.orchestration.monitoring.inflight import in_flight
from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
from crawl_assets.registry import SourceEntry
from crawl_assets.scheduling.policy import SourceHealth, due_at
from crawl_assets.settings import SchedulerSettings

FAILURE_STREAK = 3  # consecutive failed attempts that make a source need a person


@dataclass(frozen=True)
class StatusRow:
    entry: SourceEntry
    health: SourceHealth
    state: str
    overdue_seconds: float  # > 0: due for this long

    @property
    def lag_seconds(self) -> float | None:
        """Age of the data: time since the last success plus the newest item's lag at that moment."""
        if self.health.last_success is None:
            return None
        return time.time() - self.health.last_success + (self.health.lag_seconds or 0.0)


def classify(entry: SourceEntry, health: SourceHealth, *, running: bool, now: float, settings: SchedulerSettings = SchedulerSettings()) -> StatusRow:
    overdue = now - due_at(entry, health, settings)
    if entry.paused:
        state = "paused"
    elif running:
        state = "running"
    elif health.retry_after and health.retry_after > now:
        state = "waiting"
    elif health.failures:
        state = "failing"
    elif health.last_success is None:
        state = "never"
    elif overdue > entry.policy.interval_minutes * 60:
        state = "late"
    else:
        state = "ok"
    return StatusRow(entry, health, state, max(0.0, overdue))


def source_statuses(instance: dg.DagsterInstance, entries: Sequence[SourceEntry], now: float | None = None) -> list[StatusRow]:
    """Status of every entry, with health and in-flight runs read in bulk."""
    now = now or time.time()
    health = load_health(instance, [e.key for e in entries])
    running: set[str] = set()
    by_key = {e.key: e for e in entries}
    for platform, pdef in SOURCE_PARTITIONS.items():
        if any(e.platform == platform for e in entries):
            order = list(instance.get_dynamic_partitions(pdef.name or ""))
            running |= in_flight(instance, platform, order, by_key).sources
    return [classify(e, health[e.key], running=e.key in running, now=now) for e in entries]
