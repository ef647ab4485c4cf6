"""One enricher over normalized records in files, outside Dagster (``crawl-assets enrich``).

Input: what ``crawl-assets normalize`` writes (one record per line, JSON; gzip recognized) or a normalized
Parquet part of the lake. Records are read in chunks (``CHUNK`` lines), each chunk is one "part" for the
enricher (later lines are later observations: for tenant-wide enrichers the latest observation of a key
wins). A line that is not a record of the run's tenant is reported as ``file:line: reason`` and skipped.

A record-level enricher yields its rows chunk by chunk; a tenant-wide one keeps its small per-record rows and
combines them at the end into its tables (``tables`` of the enricher; one is chosen to print).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from crawl_assets.enrich.base import CombineContext, Enricher
from crawl_assets.lake.tables import RECORDS_SCHEMA, records_to_arrow
from crawl_assets.normalize.reading import LineCapped, decode_input, line_cap

CHUNK = 20_000
PARQUET_MAGIC = b"PAR1"


@dataclass
class Problem:
    name: str
    line: int | None
    reason: str


@dataclass
class FileRun:
    """What a run read: records accepted, problems (every one), the tenant (of the first record)."""

    tenant: str | None = None
    records: int = 0
    problems: list[Problem] = field(default_factory=list)


def _check(value: Any, run: FileRun) -> str | None:
    """Why a parsed line is not a record of this run (None when it is)."""
    if not isinstance(value, dict):
        return "not a JSON object"
    key = value.get("key")
    if not isinstance(key, str) or not key:
        return "no 'key' (a normalized record has one)"
    tenant = value.get("tenant")
    if not isinstance(tenant, str) or not tenant:
        return "no 'tenant'"
    if run.tenant is None:
        run.tenant = tenant
    elif tenant != run.tenant:
        return f"tenant {tenant!r} differs from the run's tenant {run.tenant!r} (enrich one tenant per run)"
    return None


def _to_table(rows: list[tuple[int, dict[str, Any]]], name: str, run: FileRun) -> pa.Table | None:
    """The chunk as a records table; a record whose fields cannot be converted is reported and left out."""
    try:
        return records_to_arrow(r for _, r in rows)
    except (TypeError, ValueError, pa.ArrowException):
        kept = []
        for line, record in rows:
            try:
                records_to_arrow([record])
            except (TypeError, ValueError, pa.ArrowException) as exc:
                run.problems.append(Problem(name, line, f"not a normalized record: {' '.join(str(exc).split())[:200]}"))
                continue
            kept.append(record)
        return records_to_arrow(kept) if kept else None


def json_line_tables(stream: IO[bytes], name: str, run: FileRun) -> Iterator[pa.Table]:
    """Records tables of ``CHUNK`` lines from a JSON-lines stream (gzip or not)."""
    decoded = decode_input(stream)
    cap = line_cap("export")
    capped = LineCapped(decoded.stream, cap)  # no line longer than the cap is held
    chunk: list[tuple[int, dict[str, Any]]] = []
    number = 0
    for number, raw in enumerate(io.BufferedReader(capped, buffer_size=1 << 20), start=1):
        for line in capped.take_long_lines():
            run.problems.append(Problem(name, line.line, line.reason(cap)))
        if not raw.strip():
            continue
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            run.problems.append(Problem(name, number, f"not JSON: {exc}"))
            continue
        why = _check(value, run)
        if why is not None:
            run.problems.append(Problem(name, number, why))
            continue
        chunk.append((number, value))
        if len(chunk) >= CHUNK:
            table = _to_table(chunk, name, run)
            chunk = []
            if table is not None:
                yield table
    run.problems += [Problem(name, line.line, line.reason(cap)) for line in capped.take_long_lines()]
    if chunk and (table := _to_table(chunk, name, run)) is not None:
        yield table
    if decoded.failure:
        run.problems.append(Problem(name, number + 1, decoded.failure))


def parquet_tables(path: str, name: str, run: FileRun) -> Iterator[pa.Table]:
    """Records tables from a normalized Parquet part (the lake's ``tables/normalized_records/...`` files)."""
    try:
        parquet = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        run.problems.append(Problem(name, None, f"not a readable Parquet file: {exc}"))
        return
    for batch in parquet.iter_batches(batch_size=CHUNK):
        table = pa.Table.from_batches([batch])
        missing = [c for c in RECORDS_SCHEMA.names if c not in table.column_names]
        if missing:
            run.problems.append(Problem(name, None, f"not a normalized records part (no {', '.join(missing)})"))
            return
        tenants = set(table.column("tenant").to_pylist())
        run.tenant = run.tenant or next(iter(sorted(t for t in tenants if t)), None)
        if tenants != {run.tenant}:
            run.problems.append(Problem(name, None, f"records of tenants {sorted(map(str, tenants))}: enrich one "
                                                    f"tenant ({run.tenant!r}) per run"))
            table = table.filter(pc.equal(table.column("tenant"), run.tenant))
        yield table


def is_parquet(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(4) == PARQUET_MAGIC


def enrich_tables(enricher: Enricher, tables: Iterator[pa.Table], run: FileRun, *, table: str | None = None,
                  now: datetime | None = None, on_rows: Callable[[pa.Table], None]) -> None:
    """Run ``enricher`` over ``tables``: a record-level one hands ``on_rows`` each chunk's rows; a
    tenant-wide one hands it its table ``table`` (default: its first) once every chunk was read."""
    if enricher.scope == "tenant":
        names = list(enricher.tables)  # type: ignore[attr-defined]
        chosen = table or names[0]
        if chosen not in names:
            raise ValueError(f"{enricher.name} makes the tables {', '.join(names)}, not {chosen!r}")
    elif table not in (None, "part"):
        raise ValueError(f"{enricher.name} makes one row per record with a finding; it has no table {table!r}")
    parts = []
    for records in tables:
        run.records += records.num_rows
        rows = enricher.extract(records.select(list(enricher.columns)))
        if enricher.scope == "record":
            on_rows(rows)
        else:
            parts.append(rows)
    if enricher.scope == "tenant":
        context = CombineContext(tenant=run.tenant or "default", generated_at=now or datetime.now(timezone.utc))
        on_rows(enricher.combine(iter(parts), context)[chosen])
