"""The files of a release package, written so the same input gives the same bytes: each table twice (Parquet for
tools, JSON lines for people and scripts), then the manifest of every file's SHA-256 and a Frictionless
``datapackage.json`` describing them."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from crawl_assets.core.files import open_regular
from crawl_assets.core.private import open_new
from crawl_assets.lake.tables import JSON_COLUMNS, LIST_COLUMNS, TIME_COLUMNS

FORMAT = "crawl-assets-release/1"
MANIFEST = "manifest.json"
DATASHEET = "datasheet.json"
DATAPACKAGE = "datapackage.json"
TABLES = ("records", "ids", "edges")  # each as {name}.parquet and {name}.jsonl
IDS_SCHEMA = pa.schema([pa.field("key", pa.string()), pa.field("platform", pa.string()),
                        pa.field("native_id", pa.string()), pa.field("source", pa.string())])
CHUNK = 1 << 20


def dumps(value: Any) -> bytes:
    """Canonical JSON: sorted keys, two-space indents, a final newline."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


class TableWriter:
    """One table of the package as ``{name}.parquet`` and ``{name}.jsonl``, written a record batch at a time."""

    def __init__(self, folder: Path, name: str, schema: pa.Schema):
        self.name, self.schema, self.rows = name, schema, 0
        self._jsonl = open_new(folder / f"{name}.jsonl", exclusive=True)
        self._parquet_file = open_new(folder / f"{name}.parquet", exclusive=True)
        self._parquet = pq.ParquetWriter(self._parquet_file, schema, compression="zstd")

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        if not batch.num_rows:
            return
        table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        table = table.select(self.schema.names).cast(self.schema)
        self._parquet.write_table(table)
        self._jsonl.write(json_lines(table))
        self.rows += table.num_rows

    def close(self) -> None:
        self._parquet.close()
        self._parquet_file.close()
        self._jsonl.close()


def json_lines(table: pa.Table) -> bytes:
    """The rows as JSON lines (sorted keys), built from Arrow: instants formatted by Arrow (UTC, microseconds,
    ``Z``), the JSON columns' stored text embedded as it is (it was written with sorted keys)."""
    columns: dict[str, list[Any]] = {}
    for name in table.column_names:
        column = table.column(name)
        if pa.types.is_timestamp(column.type):
            # as naive UTC: formatting a zoned column looks each value up in the time-zone database (slow)
            columns[name] = pc.strftime(column.cast(pa.timestamp("us")), format="%Y-%m-%dT%H:%M:%SZ").to_pylist()
        elif name in JSON_COLUMNS:
            columns[name] = [None if v is None else orjson.Fragment(v) for v in column.to_pylist()]
        else:
            columns[name] = column.to_pylist()
    names = list(columns)
    return b"".join(orjson.dumps(dict(zip(names, row)), option=orjson.OPT_SORT_KEYS) + b"\n"
                    for row in zip(*columns.values()))


def sha256_of(path: Path, limit: int | None = None) -> tuple[str, int]:
    """(hex SHA-256, bytes read) of a file read in chunks, at most ``limit`` bytes."""
    digest, size = hashlib.sha256(), 0
    with open_regular(path) as fh:
        while chunk := fh.read(CHUNK if limit is None else min(CHUNK, limit + 1 - size)):
            digest.update(chunk)
            size += len(chunk)
            if limit is not None and size > limit:
                break
    return digest.hexdigest(), size


def write_manifest(folder: Path, release_id: str) -> dict[str, Any]:
    """``manifest.json``: the SHA-256 and size of every other file of the package."""
    files = []
    for path in sorted(folder.iterdir()):
        if path.name != MANIFEST:
            digest, size = sha256_of(path)
            files.append({"name": path.name, "bytes": size, "sha256": digest})
    manifest = {"format": FORMAT, "release_id": release_id, "files": files}
    with open_new(folder / MANIFEST, exclusive=True) as fh:
        fh.write(dumps(manifest))
    return manifest


def _field(field: pa.Field) -> dict[str, Any]:
    if field.name in JSON_COLUMNS:
        kind = "object" if field.name != "media" else "array"
    elif field.name in LIST_COLUMNS:
        kind = "array"
    elif field.name in TIME_COLUMNS or pa.types.is_timestamp(field.type):
        kind = "datetime"
    elif pa.types.is_boolean(field.type):
        kind = "boolean"
    else:
        kind = "string"
    return {"name": field.name, "type": kind}


def datapackage(folder: Path, release_id: str, schemas: dict[str, pa.Schema], title: str) -> dict[str, Any]:
    """A Frictionless Data Package (v1) describing each table file, with its hash and size."""
    resources = []
    for name, schema in schemas.items():
        for ext, fmt, media in (("parquet", "parquet", "application/vnd.apache.parquet"),
                                ("jsonl", "jsonl", "application/x-ndjson")):
            path = folder / f"{name}.{ext}"
            digest, size = sha256_of(path)
            resources.append({"name": f"{name}-{ext}", "path": path.name, "profile": "tabular-data-resource",
                              "format": fmt, "mediatype": media, "encoding": "utf-8", "bytes": size,
                              "hash": f"sha256:{digest}", "schema": {"fields": [_field(f) for f in schema]}})
    for name, fmt, media, encoding in (
            ("records.csv", "csv", "text/csv", "utf-8-sig"),
            ("records.xlsx", "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", None)):
        path = folder / name
        if path.exists():  # the copies for people (``sheets.py``): the records' fields, cells as in exports
            digest, size = sha256_of(path)
            resources.append({"name": name.replace(".", "-"), "path": name, "format": fmt, "mediatype": media,
                              **({"encoding": encoding, "profile": "tabular-data-resource",
                                  "schema": {"fields": [_field(f) for f in schemas["records"]]}} if encoding else {}),
                              "bytes": size, "hash": f"sha256:{digest}"})
    # no hash of the datasheet here: its creation time is the one thing two builds of a release differ in
    resources.append({"name": "datasheet", "path": DATASHEET, "format": "json", "mediatype": "application/json"})
    return {"profile": "data-package", "name": release_id, "id": release_id, "title": title, "resources": resources}
