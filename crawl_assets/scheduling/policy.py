"""The scheduling policy, without Dagster: which sources are due, in what order, in which runs.

A source is *due* when its interval has passed since its last success (never synced: at once), it is
not paused, not in flight in any run, not inside its failure back-off or a server-requested wait, and
(export files) its file changed since it was last ingested. Due sources are ordered by priority, then by
how overdue they are. Sources that failed last time are retried alone (one run each, with Dagster's step
retries); healthy ones are packed into a few batch runs so throughput is not capped by per-run overhead.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import orjson

from crawl_assets.registry import SourceEntry, SourceKind
from crawl_assets.settings import SchedulerSettings  # the knobs are read with the other settings


@dataclass(frozen=True)
class SourceHealth:
    """What the instance remembers about a source's syncs (kept in the Dagster instance, see monitoring.health)."""

    last_success: float | None = None  # epoch seconds
    last_attempt: float | None = None
    last_failure: float | None = None
    failures: int = 0  # consecutive failed attempts since the last success
    last_error: str = ""
    retry_after: float | None = None  # the server asked not to come back before this (epoch seconds)
    probe: str = ""  # export files: size/mtime fingerprint of the file last ingested
    last_run_id: str = ""
    lag_seconds: float | None = None  # newest event's age at the last success
    pending: bool = False  # raw data may not be derived (normalized/edges/index) yet

    def to_json(self) -> str:
        return orjson.dumps({k: v for k, v in asdict(self).items() if v not in (None, "", 0, False)}).decode()

    @classmethod
    def from_json(cls, text: str | None) -> "SourceHealth":
        if not text:
            return cls()
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError:
            return cls()
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def succeeded(self, now: float, *, run_id: str = "", probe: str = "", lag_seconds: float | None = None,
                  pending: bool | None = None) -> "SourceHealth":
        return replace(self, last_success=now, last_attempt=now, failures=0, last_error="", retry_after=None,
                       probe=probe or self.probe, last_run_id=run_id, lag_seconds=lag_seconds,
                       pending=self.pending if pending is None else pending)

    def failed(self, now: float, error: str, *, run_id: str = "", retry_after: float | None = None) -> "SourceHealth":
        return replace(self, last_attempt=now, last_failure=now, failures=self.failures + 1,
                       last_error=error[:500], retry_after=retry_after, last_run_id=run_id)


def backoff_seconds(failures: int, settings: SchedulerSettings) -> float:
    """Exponential back-off after ``failures`` consecutive failures (0 → no wait)."""
    if failures <= 0:
        return 0.0
    return min(settings.backoff_cap_seconds, settings.backoff_base_seconds * 2 ** min(failures - 1, 30))


def due_at(entry: SourceEntry, health: SourceHealth, settings: SchedulerSettings) -> float:
    """Epoch seconds from which ``entry`` may be synced again (0: now)."""
    at = 0.0
    if health.last_success is not None:
        at = health.last_success + entry.policy.interval_minutes * 60
    if health.failures and health.last_failure is not None:
        at = max(at, health.last_failure + backoff_seconds(health.failures, settings))
    if health.retry_after:
        at = max(at, health.retry_after)
    return at


@dataclass
class Plan:
    """One tick's decision: failing sources to retry alone, batches of healthy ones, and why others wait."""

    singles: list[str] = field(default_factory=list)
    batches: list[list[str]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    due: int = 0

    @property
    def sources(self) -> list[str]:
        return self.singles + [k for b in self.batches for k in b]

    def summary(self) -> str:
        waits = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
        return (f"{self.due} due; requested {len(self.singles)} single + {len(self.batches)} batch runs "
                f"({len(self.sources)} sources)" + (f"; waiting: {waits}" if waits else ""))


Probe = Callable[[SourceEntry], str | None]


def plan_tick(
    entries: Sequence[SourceEntry],
    health: Mapping[str, SourceHealth],
    in_flight: set[str],
    *,
    now: float,
    free_slots: int,
    settings: SchedulerSettings = SchedulerSettings(),
    probe: Probe | None = None,
    credential_runs: Mapping[str, int] | None = None,
    max_runs_per_credential: int = 0,
) -> Plan:
    """Decide what to request this tick among ``entries`` (the tick's slice of the registry).

    ``free_slots`` is how many more runs this scheduler may have in flight; ``probe`` fingerprints an
    export file cheaply (size and mtime) so an unchanged file costs no run. A batch holds sources of one
    credential; with ``max_runs_per_credential`` > 0 no credential is in more runs than that at once
    (``credential_runs``: runs in flight per credential; '' is the platform's default credential).
    """
    plan = Plan()
    due: list[tuple[int, float, str, int, str]] = []
    probes_left = settings.probe_budget
    for entry in entries:
        h = health.get(entry.key) or SourceHealth()
        if entry.paused:
            plan.skipped["paused"] += 1
            continue
        if entry.key in in_flight:
            plan.skipped["in flight"] += 1
            continue
        at = due_at(entry, h, settings)
        if at > now:
            plan.skipped["backing off" if h.failures or (h.retry_after or 0) > now else "not due"] += 1
            continue
        if entry.kind is SourceKind.export_file and probe is not None and h.last_success is not None and not h.failures:
            if probes_left <= 0:
                plan.skipped["probe budget spent"] += 1
                continue
            probes_left -= 1
            fingerprint = probe(entry)
            if fingerprint is not None and fingerprint == h.probe:
                plan.skipped["file unchanged"] += 1
                continue
        due.append((-entry.policy.priority, at, entry.key, h.failures, entry.credential or ""))
    due.sort()
    plan.due = len(due)
    busy = Counter(credential_runs or {})

    def credential_room(cred: str) -> int:
        return free_slots if max_runs_per_credential <= 0 else max(0, max_runs_per_credential - busy[cred])

    failing = [(key, cred) for _, _, key, failures, cred in due if failures]
    healthy = [(key, cred) for _, _, key, failures, cred in due if not failures]
    single_cap = free_slots if not healthy else max(1, math.floor(free_slots * settings.single_share))
    for key, cred in failing:
        if len(plan.singles) >= min(single_cap, free_slots) or credential_room(cred) <= 0:
            plan.skipped["failing, waiting for a slot"] += 1
            continue
        plan.singles.append(key)
        busy[cred] += 1
    slots = free_slots - len(plan.singles)
    groups: dict[str, list[str]] = {}
    for key, cred in healthy:  # in priority order; a group's rank is its best source's
        groups.setdefault(cred, []).append(key)
    for cred, keys in groups.items():
        runs = min(slots, credential_room(cred), math.ceil(len(keys) / settings.min_batch))
        if runs <= 0:
            plan.skipped["no free run slot"] += len(keys)
            continue
        # spread the group over the runs it may use, so each run carries several sources
        size = max(settings.min_batch, min(settings.max_batch, math.ceil(len(keys) / runs)))
        take = keys[: size * runs]
        new = [take[i:i + size] for i in range(0, len(take), size)]
        plan.batches += new
        slots -= len(new)
        busy[cred] += len(new)
        plan.skipped["no free run slot"] += len(keys) - len(take)
    return plan


def window_slice(keys_sorted: Sequence[Any], position: int, window: int) -> tuple[list[Any], int]:
    """The next ``window`` items from ``position`` (wrapping) and the position after them."""
    n = len(keys_sorted)
    if n == 0:
        return [], 0
    if window >= n:
        return list(keys_sorted), 0
    start = position % n
    end = start + window
    out = list(keys_sorted[start:end]) + (list(keys_sorted[: end - n]) if end > n else [])
    return out, end % n
