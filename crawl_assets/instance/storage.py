"""Instance storage chosen by the environment: Postgres when configured, else SQLite.

``dagster.yaml`` names this class under ``storage: custom:``; one file then serves a laptop (SQLite
under ``DAGSTER_HOME``) and a deployment (``DAGSTER_PG_URL`` or ``DAGSTER_PG_HOST`` set), with no
second config file to keep in sync. The choice and its variables are read in ``crawl_assets.settings``
(``postgres_configured``; the API's key store shares it).
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from dagster._core.storage.base_storage import DagsterStorage
from dagster._core.storage.event_log.schema import SqlEventLogStorageMetadata
from dagster._core.storage.event_log.sqlite import sqlite_event_log
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME, SqliteEventLogStorage
from dagster._core.storage.sql import create_engine, get_alembic_config, safe_commit
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage
from dagster._serdes import ConfigurableClass, ConfigurableClassData
from sqlalchemy.pool import NullPool

from crawl_assets.settings import postgres_config, postgres_configured, sqlite_dir

__all__ = ["EnvSelectedStorage"]


class EnvSelectedStorage(DagsterStorage, ConfigurableClass):
    """Never instantiated: ``from_config_value`` returns the Postgres or SQLite storage.

    It subclasses ``DagsterStorage`` only because Dagster checks the declared class before loading.
    """

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None, config_value: Any) -> Any:
        if postgres_configured():
            from dagster_postgres import DagsterPostgresStorage

            return DagsterPostgresStorage.from_config_value(inst_data, postgres_config())
        return _SqliteStorage(str(sqlite_dir()), inst_data=inst_data)


# Run shards whose engines are kept (a run writes to its own shard while it runs; older ones are rarely read).
_KEPT_RUN_ENGINES = 32


@functools.cache
def event_log_migrations() -> ScriptDirectory:
    """Dagster's migration scripts of the SQLite event log, read once per process (reading them parses every
    script file, which Dagster did twice for each run's new shard)."""
    return ScriptDirectory.from_config(get_alembic_config(sqlite_event_log.__file__))


class _EventLogStorage(SqliteEventLogStorage):
    """Dagster's SQLite event log with one engine per shard for the storage's life instead of one per
    connection: each new engine re-ran SQLAlchemy's dialect set-up, a large share of every event written and
    of every partition lookup. Connections are still opened per use (``NullPool``), as Dagster's are."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self._engines: OrderedDict[str, sa.engine.Engine] = OrderedDict()
        self._engines_lock = threading.Lock()
        super().__init__(base_dir, inst_data=inst_data)

    def _engine(self, shard: str) -> sa.engine.Engine:
        with self._engines_lock:
            engine = self._engines.get(shard)
            if engine is not None:
                self._engines.move_to_end(shard)
                return engine
            engine = create_engine(self.conn_string_for_shard(shard), poolclass=NullPool,
                                   connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS})
            self._engines[shard] = engine
            runs = [s for s in self._engines if s != INDEX_SHARD_NAME]
            for old in runs[:-_KEPT_RUN_ENGINES]:
                del self._engines[old]
            return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator[sa.engine.Connection]:
        with self._db_lock:
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn:
                with conn.begin():
                    yield conn

    def _initdb(self, engine: sa.engine.Engine, for_index_shard: bool = False) -> None:
        """A run's shard as Dagster makes it (tables, WAL, stamped at the head revision), with the migration
        scripts read once per process; the index shard, and a shard another process is initialising at the
        same moment, go through Dagster's own path (which handles legacy databases and retries)."""
        if not for_index_shard:
            try:
                with engine.connect() as conn:
                    context = MigrationContext.configure(conn)
                    if context.get_current_revision() is None:
                        SqlEventLogStorageMetadata.create_all(engine)
                        conn.execute(sa.text("PRAGMA journal_mode=WAL;"))
                        context.stamp(event_log_migrations(), "head")
                        safe_commit(conn)
                return
            except (sa.exc.DatabaseError, sqlite3.DatabaseError):
                pass
        super()._initdb(engine, for_index_shard=for_index_shard)

    def dispose(self) -> None:
        with self._engines_lock:
            engines = list(self._engines.values())
            self._engines.clear()
        for engine in engines:
            engine.dispose()
        super().dispose()

    def has_table(self, table_name: str) -> bool:
        with self._engine(INDEX_SHARD_NAME).connect() as conn:
            return bool(conn.dialect.has_table(conn, table_name))


class _SqliteStorage(DagsterSqliteStorage):
    """Dagster's SQLite storage with the event log above."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        super().__init__(base_dir, inst_data)
        self._event_log_storage = _EventLogStorage(os.path.join(base_dir, "history", "runs", ""))
