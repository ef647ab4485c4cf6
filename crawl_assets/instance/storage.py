"""Instance storage chosen by the environment: Postgres when configured, else SQLite.

``dagster.yaml`` names this class under ``storage: custom:``; one file then serves a laptop (SQLite
under ``DAGSTER_HOME``) and a deployment (``DAGSTER_PG_URL`` or ``DAGSTER_PG_HOST`` set), with no
second config file to keep in sync. The choice and its variables live in ``crawl_assets.instance.db``
(no Dagster import there: the API's key store shares it).
"""

from __future__ import annotations

from typing import Any

from dagster._core.storage.base_storage import DagsterStorage
from dagster._serdes import ConfigurableClass, ConfigurableClassData

from crawl_assets.instance.db import postgres_config, postgres_configured, sqlite_dir

__all__ = ["EnvSelectedStorage", "postgres_config", "postgres_configured"]


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

        return DagsterSqliteStorage.from_config_value(inst_data, {"base_dir": str(sqlite_dir())})
