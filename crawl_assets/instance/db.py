"""Which database the Dagster instance uses, chosen by the environment, without importing Dagster.

Postgres when ``DAGSTER_PG_URL`` or ``DAGSTER_PG_HOST`` is set, else SQLite under ``$DAGSTER_HOME/storage``.
``instance.storage`` hands this choice to Dagster; the API's key store (``crawl_assets.api.access``) puts its
table in the same database. Variables:

- ``DAGSTER_PG_URL``: a full SQLAlchemy URL, e.g. ``postgresql+psycopg2://user:pw@host:5432/db``; or
- ``DAGSTER_PG_HOST`` (+ ``DAGSTER_PG_PORT`` 5432, ``DAGSTER_PG_USER`` postgres,
  ``DAGSTER_PG_PASSWORD`` empty, ``DAGSTER_PG_DB`` postgres).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

_PG_VARS = ("DAGSTER_PG_URL", "DAGSTER_PG_HOST")
# psycopg2 is what is installed; SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3.
PG_SCHEME = "postgresql+psycopg2"


def postgres_configured() -> bool:
    return any(os.environ.get(v) for v in _PG_VARS)


def postgres_config() -> dict[str, Any]:
    """dagster-postgres config from the environment."""
    if os.environ.get("DAGSTER_PG_URL"):
        return {"postgres_url": os.environ["DAGSTER_PG_URL"]}
    return {
        "postgres_db": {
            "hostname": os.environ["DAGSTER_PG_HOST"],
            "port": int(os.environ.get("DAGSTER_PG_PORT", "5432")),
            "username": os.environ.get("DAGSTER_PG_USER", "postgres"),
            "password": os.environ.get("DAGSTER_PG_PASSWORD", ""),
            "db_name": os.environ.get("DAGSTER_PG_DB", "postgres"),
            "scheme": PG_SCHEME,
        }
    }


def sqlite_dir() -> Path:
    """Where the SQLite instance keeps its database files."""
    return Path(os.environ.get("DAGSTER_HOME") or os.path.abspath(".crawl_home")) / "storage"


def postgres_url() -> str:
    """The SQLAlchemy URL of the instance's Postgres database (``postgres_configured()`` must be true)."""
    config = postgres_config()
    url = config.get("postgres_url")
    if url is None:
        db = config["postgres_db"]
        user = quote(db["username"]) + (f":{quote(db['password'])}" if db["password"] else "")
        url = f"{db['scheme']}://{user}@{db['hostname']}:{db['port']}/{db['db_name']}"
    return psycopg2_url(url)


def psycopg2_url(url: str) -> str:
    """``url`` with the driver that is installed (a bare ``postgresql://`` means psycopg 3 to SQLAlchemy 2.1)."""
    scheme, sep, rest = url.partition("://")
    return f"{PG_SCHEME}://{rest}" if sep and scheme in ("postgresql", "postgres") else url


def connect(url: str, application_name: str, **options: Any) -> Any:
    """A psycopg2 connection in autocommit mode to the database of SQLAlchemy URL ``url`` (its query parameters
    and ``options`` become connection parameters)."""
    import psycopg2
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    conn = psycopg2.connect(host=parsed.host, port=parsed.port or 5432, user=parsed.username,
                            password=parsed.password, dbname=parsed.database, application_name=application_name,
                            **options, **{k: v for k, v in parsed.query.items() if isinstance(v, str)})
    conn.autocommit = True
    return conn


def create_table(conn: Any, name: str, columns: str) -> None:
    """``CREATE TABLE IF NOT EXISTS name (columns)`` on an autocommit connection, safe when several processes
    do it at once (Postgres' own ``IF NOT EXISTS`` is not: the loser hits a unique violation on the type):
    one at a time, under a transaction-level advisory lock on the table's name."""
    with conn.cursor() as cur:
        cur.execute("BEGIN")
        try:
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"crawl_assets:create:{name}",))
            cur.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns})")
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
