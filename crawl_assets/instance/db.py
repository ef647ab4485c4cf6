"""The Dagster instance's Postgres database, without importing Dagster: its URL (which database the environment
chose: ``settings.postgres_config``), connections and tables of our own in it. ``instance.storage`` hands the
choice to Dagster; the API's key store, the shared locks and a Postgres registry put their tables there too.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from crawl_assets import settings
from crawl_assets.settings import PG_SCHEME


def postgres_url() -> str:
    """The SQLAlchemy URL of the instance's Postgres database (``settings.postgres_configured()`` must be true)."""
    config = settings.postgres_config()
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
