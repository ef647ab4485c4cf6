"""Search every stored value of a Dagster instance for a secret: text, binary and compressed columns.

Dagster keeps repository and job snapshots zlib-compressed (``snapshots.snapshot_body``) and event bodies
as serialized JSON; a plain text search of the tables misses what is compressed. Each value is searched as
stored and, when it is binary, after zlib/gzip decompression.
"""

from __future__ import annotations

import gzip
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def readings(value: Any) -> Iterator[bytes]:
    """A stored value as bytes, then (when binary) every decompressed form of it."""
    if value is None:
        return
    if isinstance(value, memoryview):
        value = value.tobytes()
    if isinstance(value, (bytes, bytearray)):
        data = bytes(value)
        yield data
        for decode in (zlib.decompress, gzip.decompress, lambda d: zlib.decompress(d, -zlib.MAX_WBITS)):
            try:
                yield decode(data)
            except (zlib.error, OSError, EOFError):
                continue
        return
    yield str(value).encode("utf-8", "surrogatepass")


def hits_in_rows(where: str, rows: Iterable[tuple[Any, ...]], columns: list[str], needle: bytes) -> list[str]:
    return [f"{where}.{column}" for row in rows for column, value in zip(columns, row)
            if any(needle in reading for reading in readings(value))]


def sqlite_hits(home: Path, needle: str) -> tuple[list[str], set[str]]:
    """Where ``needle`` is in any SQLite database under ``home`` (a SQLite instance's storage), and the
    tables searched (so a caller can tell an empty search from a clean one)."""
    found: list[str] = []
    searched: set[str] = set()
    for db in sorted(home.rglob("*.db")):
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for table in tables:
                cursor = conn.execute(f'SELECT * FROM "{table}"')
                columns = [d[0] for d in cursor.description]
                found += hits_in_rows(f"{db.relative_to(home)}:{table}", cursor, columns, needle.encode())
                searched.add(table)
    return found, searched


def postgres_hits(url: str, needle: str) -> tuple[list[str], set[str]]:
    """Where ``needle`` is in any table of the Postgres database at ``url``, and the tables searched."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    found: list[str] = []
    try:
        with engine.connect() as conn:
            tables = [r[0] for r in conn.execute(sa.text(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"))]
            for table in tables:
                result = conn.execute(sa.text(f'SELECT * FROM "{table}"'))
                found += hits_in_rows(table, result, list(result.keys()), needle.encode())
    finally:
        engine.dispose()
    return found, set(tables)
