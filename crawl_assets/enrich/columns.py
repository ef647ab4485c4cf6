"""The record columns every record-level feature row repeats: which record it is about, and the times that
version it in the index like its record (an older observation's features never overwrite a newer one's)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_TS = pa.timestamp("us", tz="UTC")

CONTEXT_FIELDS = [
    pa.field("key", pa.string()), pa.field("tenant", pa.string()), pa.field("platform", pa.string()),
    pa.field("source", pa.string()),
    pa.field("author_id", pa.string()), pa.field("created_at", _TS), pa.field("edited_at", _TS),
    pa.field("deleted_at", _TS), pa.field("collected_at", _TS),
]
CONTEXT_COLUMNS = ("key", "tenant", "platform", "source", "author_id", "created_at", "edited_at", "deleted_at", "provenance")
_COLLECTED = r'"collected_at":"(?P<at>[^"]+)"'


def collected_at(records: pa.Table) -> pa.Array:
    """``provenance.collected_at`` of each record, read from the JSON text without parsing it (vectorized)."""
    if "provenance" not in records.column_names or records.num_rows == 0:
        return pa.nulls(records.num_rows, _TS)
    found = pc.struct_field(pc.extract_regex(records.column("provenance"), _COLLECTED), [0])
    text = pc.replace_substring_regex(found, r"Z$", "+00:00")
    return pc.cast(pc.strptime(pc.utf8_slice_codeunits(text, 0, 19), format="%Y-%m-%dT%H:%M:%S", unit="us",
                               error_is_null=True), _TS)


def context(records: pa.Table, rows: pa.Array | list[int] | None = None) -> dict[str, pa.Array]:
    """The context columns of ``records`` (all rows, or the positions ``rows``)."""
    table = records if rows is None else records.take(positions(rows))
    out: dict[str, pa.Array] = {}
    for f in CONTEXT_FIELDS:
        if f.name == "collected_at":
            out[f.name] = collected_at(table)
        elif f.name in table.column_names:
            out[f.name] = pc.cast(table.column(f.name), f.type)
        else:
            out[f.name] = pa.nulls(table.num_rows, f.type)
    return out


def positions(rows: pa.Array | list[int]) -> pa.Array:
    """Row positions for ``take`` (an empty Python list would be a null-typed array, which ``take`` refuses)."""
    return rows if isinstance(rows, pa.Array) else pa.array(rows, pa.int64())


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def record_documents(rows: pa.Table, payload_fields: tuple[str, ...]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Per row: (the record reference of a feature document, the row's ``payload_fields``)."""
    for row in rows.select([*(f.name for f in CONTEXT_FIELDS), *payload_fields]).to_pylist():
        ref = {"record_key": row["key"], "tenant": row["tenant"], "platform": row["platform"], "source": row["source"],
               "author_id": row["author_id"], "created_at": _iso(row["created_at"]),
               "edited_at": _iso(row["edited_at"]), "deleted_at": _iso(row["deleted_at"]),
               "provenance": {"collected_at": _iso(row["collected_at"])}}
        yield ref, {name: row[name] for name in payload_fields}


def last_rows(keys: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Mask of each key's last row (rows are in collection order, so the last is the latest; a null key is
    one key)."""
    n = len(keys)
    live = np.ones(n, bool)
    if pc.count_distinct(keys).as_py() != n:
        ids = pc.dictionary_encode(keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys).indices
        codes = pc.fill_null(ids, -1).to_numpy()
        last = n - 1 - np.unique(codes[::-1], return_index=True)[1]
        live[:] = False
        live[last] = True
    return live
