"""Per-source sync health (last success/failure, streak, server wait) in the Dagster instance.

Kept in the instance's key-value table (the one Dagster's daemons keep their cursors in), one small
JSON value per source, so the scheduler reads the state of thousands of sources in one query, and
every kind of run (sensor batch, single retry, UI backfill, CLI) updates it through the raw asset.
The checkpoint itself stays with the asset (``crawl_assets.checkpoints``); this is scheduling state.
"""

from __future__ import annotations

import time
from dataclasses import replace
from collections.abc import Iterable, Mapping

import dagster as dg

from crawl_assets.scheduling.policy import Health

PREFIX = "crawl_assets/health/"
_CHUNK = 2000  # keys per IN (...) query


def load_health(instance: dg.DagsterInstance, keys: Iterable[str]) -> dict[str, Health]:
    """Health of each source key (sources never seen get ``Health()``), in few bulk queries."""
    keys = list(keys)
    out = {k: Health() for k in keys}
    storage = instance.run_storage
    for i in range(0, len(keys), _CHUNK):
        values = storage.get_cursor_values({PREFIX + k for k in keys[i:i + _CHUNK]})
        for name, text in values.items():
            out[name[len(PREFIX):]] = Health.from_json(text)
    return out


def _stored(health: Health) -> bool:
    """Whether a health read from the store came from a stored row (every stored row has one of these)."""
    return bool(health.last_attempt or health.pending)


def save_health(instance: dg.DagsterInstance, updates: Mapping[str, Health], *, known: Iterable[str] = ()) -> None:
    """Write many sources' health: one update for the existing keys, one insert for the new ones.

    ``known``: keys known to be stored already (their health was read from a row), saving a read."""
    if not updates:
        return
    storage = instance.run_storage
    pairs = {PREFIX + k: h.to_json() for k, h in updates.items()}
    known_keys = {PREFIX + k for k in known}
    unknown = set(pairs) - known_keys
    existing = set(storage.get_cursor_values(unknown)) if unknown else set()
    existing |= known_keys & set(pairs)
    # Dagster's upsert updates only when every key exists: split so no new key is dropped.
    for part in ({k: v for k, v in pairs.items() if k in existing}, {k: v for k, v in pairs.items() if k not in existing}):
        if part:
            storage.set_cursor_values(part)


def record_success(instance: dg.DagsterInstance, key: str, *, run_id: str = "", probe: str = "",
                   lag_seconds: float | None = None, now: float | None = None, pending: bool | None = None,
                   before: Health | None = None) -> Health:
    """``before``: the health read at the start of the sync (saves a read; one writer per source holds its lock)."""
    base = before if before is not None else load_health(instance, [key])[key]
    health = base.succeeded(now or time.time(), run_id=run_id, probe=probe, lag_seconds=lag_seconds, pending=pending)
    save_health(instance, {key: health}, known=[key] if _stored(base) else [])
    return health


def mark_pending(instance: dg.DagsterInstance, key: str, health: Health, pending: bool) -> Health:
    """Set whether the source's raw data may still need deriving (see ``Health.pending``)."""
    if health.pending == pending:
        return health
    updated = replace(health, pending=pending)
    save_health(instance, {key: updated}, known=[key] if _stored(health) else [])
    return updated


def record_failure(instance: dg.DagsterInstance, key: str, error: str, *, run_id: str = "",
                   retry_after: float | None = None, now: float | None = None) -> Health:
    health = load_health(instance, [key])[key].failed(now or time.time(), error, run_id=run_id, retry_after=retry_after)
    save_health(instance, {key: health})
    return health
