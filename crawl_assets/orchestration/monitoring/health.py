"""Per-source sync health (last success/failure, streak, server wait), kept with the Dagster instance.

One small JSON value per source in our own table of the instance's database
(``crawl_assets.orchestration.monitoring.health_table``), so the scheduler reads the state of thousands of sources in a
few queries, and every kind of run (sensor batch, single retry, UI backfill, CLI) updates it through the
raw asset. The checkpoint itself stays with the asset (``crawl_assets.orchestration.checkpoints``); this is scheduling state.

Earlier versions kept these values in Dagster's daemon cursor store under ``crawl_assets/health/<key>``. A
source with no row yet is looked up there once per process (public ``RunStorage.get_cursor_values``) and
copied over, so an upgrade loses no health (``pending`` above all: a crash's raw data stays to be derived).
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from collections.abc import Iterable, Mapping
from pathlib import Path

import dagster as dg

from crawl_assets.instance.db import psycopg2_url
from crawl_assets.orchestration.monitoring import health_table
from crawl_assets.scheduling.policy import SourceHealth

LEGACY_PREFIX = "crawl_assets/health/"  # the key of a source's health in Dagster's cursor store, before
_legacy_checked: dict[str, set[str]] = {}  # per database: keys already looked up in the legacy store
_legacy_lock = threading.Lock()


def database_url(instance: dg.DagsterInstance) -> str:
    """The instance's own database: its Postgres, else SQLite in its ``storage/`` folder."""
    postgres = getattr(instance.run_storage, "postgres_url", None)  # dagster-postgres' run storage
    if isinstance(postgres, str) and postgres:
        return psycopg2_url(postgres)
    return health_table.sqlite_url(Path(instance.root_directory) / "storage")


def _legacy(instance: dg.DagsterInstance, url: str, missing: list[str]) -> dict[str, str]:
    """Values of ``missing`` keys still in the old cursor store (each key asked once per process), copied
    into the table (rows written meanwhile win)."""
    with _legacy_lock:
        checked = _legacy_checked.setdefault(url, set())
        ask = [k for k in missing if k not in checked]
        checked.update(ask)
    found: dict[str, str] = {}
    for i in range(0, len(ask), health_table.CHUNK):
        values = instance.run_storage.get_cursor_values({LEGACY_PREFIX + k for k in ask[i:i + health_table.CHUNK]})
        found.update({name[len(LEGACY_PREFIX):]: text for name, text in values.items() if text})
    if found:
        health_table.save(url, found, only_new=True)
        found.update(health_table.load(url, found))
    return found


def load_health(instance: dg.DagsterInstance, keys: Iterable[str]) -> dict[str, SourceHealth]:
    """Health of each source key (sources never seen get ``SourceHealth()``), in few bulk queries."""
    keys = list(keys)
    url = database_url(instance)
    texts = health_table.load(url, keys)
    missing = [k for k in keys if k not in texts]
    if missing:
        texts.update(_legacy(instance, url, missing))
    return {k: SourceHealth.from_json(texts.get(k)) for k in keys}


def save_health(instance: dg.DagsterInstance, updates: Mapping[str, SourceHealth]) -> None:
    """Write many sources' health in one upsert (new and existing keys alike)."""
    if updates:
        health_table.save(database_url(instance), {k: h.to_json() for k, h in updates.items()})


def record_success(instance: dg.DagsterInstance, key: str, *, run_id: str = "", probe: str = "",
                   lag_seconds: float | None = None, now: float | None = None, pending: bool | None = None,
                   before: SourceHealth | None = None) -> SourceHealth:
    """``before``: the health read at the start of the sync (saves a read; one writer per source holds its lock)."""
    base = before if before is not None else load_health(instance, [key])[key]
    health = base.succeeded(now or time.time(), run_id=run_id, probe=probe, lag_seconds=lag_seconds, pending=pending)
    save_health(instance, {key: health})
    return health


def mark_pending(instance: dg.DagsterInstance, key: str, health: SourceHealth, pending: bool) -> SourceHealth:
    """Set whether the source's raw data may still need deriving (see ``SourceHealth.pending``)."""
    if health.pending == pending:
        return health
    updated = replace(health, pending=pending)
    save_health(instance, {key: updated})
    return updated


def record_failure(instance: dg.DagsterInstance, key: str, error: str, *, run_id: str = "",
                   retry_after: float | None = None, now: float | None = None) -> SourceHealth:
    health = load_health(instance, [key])[key].failed(now or time.time(), error, run_id=run_id, retry_after=retry_after)
    save_health(instance, {key: health})
    return health
