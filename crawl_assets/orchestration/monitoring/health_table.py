"""The table that holds each source's sync health, in the Dagster instance's own database (no Dagster here).

``crawl_source_health(source_key, health, updated_at)``: one row per source, ``health`` being
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
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from crawl_assets.core.private import private_file

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


def load(url: str, keys: Iterable[str]) -> dict[str, str]:
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


def save(url: str, texts: Mapping[str, str], *, only_new: bool = False) -> None:
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
