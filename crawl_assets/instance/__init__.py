"""The Dagster instance's home: which database it uses (``db``: SQLite under ``DAGSTER_HOME`` or Postgres from
``DAGSTER_PG_*``, without Dagster, shared by the API's key store, the registry and the locks), the storage
``dagster.yaml`` names (``storage.EnvSelectedStorage``) and the shipped ``dagster.yaml`` itself."""
