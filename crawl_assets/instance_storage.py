"""Instance storage chosen by the environment: Postgres when configured, else SQLite.

``dagster.yaml`` names this class under ``storage: custom:``; one file then serves a laptop (SQLite
under ``DAGSTER_HOME``) and a deployment (``DAGSTER_PG_URL`` or ``DAGSTER_PG_HOST`` set), with no
second config file to keep in sync. Variables:

- ``DAGSTER_PG_URL``: a full SQLAlchemy URL, e.g. ``postgresql+psycopg2://user:pw@host:5432/db``; or
- ``DAGSTER_PG_HOST`` (+ ``DAGSTER_PG_PORT`` 5432, ``DAGSTER_PG_USER`` postgres,
  ``DAGSTER_PG_PASSWORD`` empty, ``DAGSTER_PG_DB`` postgres).
"""

from __future__ import annotations

import os
from typing import Any

from dagster._core.storage.base_storage import DagsterStorage
from dagster._serdes import ConfigurableClass, ConfigurableClassData

_PG_VARS = ("DAGSTER_PG_URL", "DAGSTER_PG_HOST")


def postgres_configured() -> bool:
    return any(os.environ.get(v) for v in _PG_VARS)


def postgres_config() -> dict[str, Any]:
    """dagster-postgres config from the environment (psycopg2 scheme: SQLAlchemy 2.1 defaults to psycopg 3)."""
    if os.environ.get("DAGSTER_PG_URL"):
        return {"postgres_url": os.environ["DAGSTER_PG_URL"]}
    return {
        "postgres_db": {
            "hostname": os.environ["DAGSTER_PG_HOST"],
            "port": int(os.environ.get("DAGSTER_PG_PORT", "5432")),
            "username": os.environ.get("DAGSTER_PG_USER", "postgres"),
            "password": os.environ.get("DAGSTER_PG_PASSWORD", ""),
            "db_name": os.environ.get("DAGSTER_PG_DB", "postgres"),
            "scheme": "postgresql+psycopg2",
        }
    }


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
        from dagster._core.storage.sqlite_storage import DagsterSqliteStorage

        base_dir = os.path.join(os.environ.get("DAGSTER_HOME") or os.path.abspath(".crawl_home"), "storage")
        return DagsterSqliteStorage.from_config_value(inst_data, {"base_dir": base_dir})
