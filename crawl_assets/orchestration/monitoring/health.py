"""Per-source sync health (last success/failure, streak, server wait), kept with the Dagster instance.

One small JSON value per source in our own table of the instance's database
(``crawl_source_health``, below), so the scheduler reads the state of thousands of sources in a
few queries, and every kind of run (sensor batch, single retry, UI backfill, CLI) updates it through the
raw asset. The checkpoint itself stays with the asset (``crawl_assets.orchestration.partition_state``); this is scheduling state.

Earlier versions kept these values in Dagster's daemon cursor store under ``crawl_assets/health/<key>``. A
source with no row yet is looked up there once per process (public ``RunStorage.get_cursor_values``) and
copied over, so an upgrade loses no health (``pending`` above all: a crash's raw data stays to be derived).

The table ``crawl_source_health(source_key, health, updated_at)`` (no Dagster in its functions): one row per source, ``health`` being
``SourceHealth.to_json()`` (its decoder ignores unknown fields, so a field added later needs no migration).
Postgres: the instance's database. SQLite: ``crawl_health.db`` in the instance's ``storage/`` folder, next to
Dagster's files and not inside them (``dagster instance migrate`` owns those), so health writes never wait on
the event log's locks.

Reads are bulk (``IN`` lists of 2,000 keys); writes are one upsert per call, new and existing keys together.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

import dagster as dg
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from crawl_assets.core.private import private_file
from crawl_assets.instance.db import psycopg2_url
from crawl_assets.scheduling.policy import SourceHealth

CHUNK = 2000  # keys per IN (...) query
FILENAME = "crawl_health.db"

metadata = sa.MetaData()
health_table = sa.Table(
    "crawl_source_health", metadata,
    sa.Column("source_key", sa.String(200), primary_key=True),
    sa.Column("health", sa.Text, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

_engines: dict[str, sa.Engine] = {}
_engines_lock = threading.Lock()


def sqlite_url(storage_dir: str | Path) -> str:
    return f"sqlite:///{private_file(Path(storage_dir) / FILENAME)}"  # sync state: its owner's alone


def _on_sqlite_connect(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers (the scheduler) never wait for a sync's write
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def engine(url: str) -> sa.Engine:
    """One engine per database per process, its table created on first use."""
    with _engines_lock:
        found = _engines.get(url)
        if found is not None:
            return found
        if url.startswith("sqlite"):
            # no pool: a SQLite connection is cheap, and many instances (one per test) keep no file open
            made = sa.create_engine(url, poolclass=sa.pool.NullPool)
            sa.event.listen(made, "connect", _on_sqlite_connect)
            metadata.create_all(made, checkfirst=True)
        else:
            made = sa.create_engine(url, pool_pre_ping=True)  # survives a database restart
            # several run workers (machines) meeting a fresh database create the table at once: one at a time
            with made.begin() as conn:
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext('crawl_assets:create:health'))"))
                metadata.create_all(conn, checkfirst=True)
        _engines[url] = made
        return made


def load_rows(url: str, keys: Iterable[str]) -> dict[str, str]:
    """The stored health text of each of ``keys`` that has a row."""
    keys = list(dict.fromkeys(keys))
    out: dict[str, str] = {}
    if not keys:
        return out
    col = health_table.c
    with engine(url).connect() as conn:
        for i in range(0, len(keys), CHUNK):
            rows = conn.execute(sa.select(col.source_key, col.health).where(col.source_key.in_(keys[i:i + CHUNK])))
            out.update({key: text for key, text in rows})
    return out


def save_rows(url: str, texts: Mapping[str, str], *, only_new: bool = False) -> None:
    """Insert or replace the rows of ``texts`` in one statement per chunk (one transaction).

    ``only_new``: keep rows already there (used when copying the legacy values: a newer row wins)."""
    if not texts:
        return
    made = engine(url)
    dialect = postgresql if made.dialect.name == "postgresql" else sqlite
    now = time.time()
    items = list(texts.items())
    with made.begin() as conn:
        for i in range(0, len(items), CHUNK):
            stmt = dialect.insert(health_table).values(
                [{"source_key": k, "health": v, "updated_at": now} for k, v in items[i:i + CHUNK]])
            if only_new:
                stmt = stmt.on_conflict_do_nothing(index_elements=["source_key"])
            else:
                stmt = stmt.on_conflict_do_update(index_elements=["source_key"],
                                                  set_={"health": stmt.excluded.health, "updated_at": now})
            conn.execute(stmt)


LEGACY_PREFIX = "crawl_assets/health/"  # the key of a source's health in Dagster's cursor store, before
_legacy_checked: dict[str, set[str]] = {}  # per database: keys already looked up in the legacy store
_legacy_lock = threading.Lock()


def database_url(instance: dg.DagsterInstance) -> str:
    """The instance's own database: its Postgres, else SQLite in its ``storage/`` folder."""
    postgres = getattr(instance.run_storage, "postgres_url", None)  # dagster-postgres' run storage
    if isinstance(postgres, str) and postgres:
        return psycopg2_url(postgres)
    return sqlite_url(Path(instance.root_directory) / "storage")


def _legacy(instance: dg.DagsterInstance, url: str, missing: list[str]) -> dict[str, str]:
    """Values of ``missing`` keys still in the old cursor store (each key asked once per process), copied
    into the table (rows written meanwhile win)."""
    with _legacy_lock:
        checked = _legacy_checked.setdefault(url, set())
        ask = [k for k in missing if k not in checked]
        checked.update(ask)
    found: dict[str, str] = {}
    for i in range(0, len(ask), CHUNK):
        values = instance.run_storage.get_cursor_values({LEGACY_PREFIX + k for k in ask[i:i + CHUNK]})
        found.update({name[len(LEGACY_PREFIX):]: text for name, text in values.items() if text})
    if found:
        save_rows(url, found, only_new=True)
        found.update(load_rows(url, found))
    return found


def load_health(instance: dg.DagsterInstance, keys: Iterable[str]) -> dict[str, SourceHealth]:
    """Health of each source key (sources never seen get ``SourceHealth()``), in few bulk queries."""
    keys = list(keys)
    url = database_url(instance)
    texts = load_rows(url, keys)
    missing = [k for k in keys if k not in texts]
    if missing:
        texts.update(_legacy(instance, url, missing))
    return {k: SourceHealth.from_json(texts.get(k)) for k in keys}


def save_health(instance: dg.DagsterInstance, updates: Mapping[str, SourceHealth]) -> None:
    """Write many sources' health in one upsert (new and existing keys alike)."""
    if updates:
        save_rows(database_url(instance), {k: h.to_json() for k, h in updates.items()})


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
