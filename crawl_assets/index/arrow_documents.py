"""Record and edge documents built straight from Arrow batches of the lake's parts, as the bulk sink sends them.

A record's source is the JSON that ``lake.tables.arrow_to_records``, the sink's ``lemma_field.with_lemmas`` and
``documents.source_bytes`` give for its row, byte for byte, without parsing the JSON columns (their stored text
is spliced in as an ``orjson.Fragment``) and with times formatted a column at a time. Versions are ``versioning.observation_version``
of the same row, computed over whole columns. Rows the fast path does not cover (another tenant, an unusual
key, no time to version by) are handed back as dicts, for the sink's own checks and dead letters.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.index.documents import ID_MAX_BYTES, edge_key
from crawl_assets.index.lemma_field import FIELD as LEMMA_FIELD
from crawl_assets.index.lemma_field import lemmas_of
from crawl_assets.index.versioning import DELAY_BITS, EPOCH, MAX_DELAY, MAX_EDIT, _seconds
from crawl_assets.lake.tables import JSON_COLUMNS, TIME_COLUMNS, arrow_to_records

EDGE_FIELDS = ("type", "src", "dst", "created_at", "platform", "tenant")  # what an edge document carries
_US = 1_000_000
_FIRST_SECOND = -30_610_224_000  # 1000-01-01T00:00:00Z: four-digit years format alike in numpy and Python
_LAST_SECOND = 253_402_300_799  # 9999-12-31T23:59:59Z
_COLLECTED = r'^\{"collected_at":"(?P<at>[^"\\]*)"'  # the first key of the sorted provenance JSON


@dataclass
class Encoded:
    """One batch as bulk documents: for row ``i`` with ``fast[i]``, its ``_id``, ``YYYY-MM`` route (None:
    undated), version and source; the other rows are in ``slow`` as dicts."""

    ids: list[str]
    routes: list[str | None]
    versions: list[int]
    sources: list[bytes]
    fast: list[bool]
    slow: list[dict]


def _column(batch: pa.RecordBatch | pa.Table, name: str) -> pa.Array:
    column = batch.column(name)
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def instants(column: pa.Array) -> list[str | None]:
    """ISO 8601 UTC text of a timestamp column as ``arrow_to_records`` writes it (``…Z``, fractions only when
    not zero): whole seconds of four-digit years formatted by numpy, the rest by Python as there."""
    n = len(column)
    if column.null_count == n:
        return [None] * n
    micros = pc.fill_null(column.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    seconds = micros // _US
    plain = (micros % _US == 0) & (seconds >= _FIRST_SECOND) & (seconds <= _LAST_SECOND)
    text = np.datetime_as_string(seconds.astype("datetime64[s]"), unit="s").tolist()
    out: list[str | None] = [t + "Z" for t in text]
    valid = column.is_valid().to_numpy(zero_copy_only=False)
    for i in np.flatnonzero(~plain | ~valid):
        value = column[int(i)].as_py()
        out[i] = None if value is None else value.isoformat().replace("+00:00", "Z")
    return out


def _epoch_seconds(column: pa.Array) -> np.ndarray:
    """Whole epoch seconds (truncated toward zero, as ``int(datetime.timestamp())``); nulls as int64 min."""
    micros = pc.fill_null(column.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    seconds = micros // _US
    seconds += (micros < 0) & (micros % _US != 0)
    return np.where(column.is_valid().to_numpy(zero_copy_only=False), seconds, np.iinfo(np.int64).min)


def collected_seconds(provenance: pa.Array) -> np.ndarray:
    """``provenance.collected_at`` of each row as epoch seconds (int64 min when absent or unreadable), read from
    the stored JSON text; a row whose text does not start with it is parsed."""
    n = len(provenance)
    found = pc.extract_regex(provenance, _COLLECTED)
    at = found.field("at") if n else pa.array([], pa.string())
    missing = np.flatnonzero(~found.is_valid().to_numpy(zero_copy_only=False)) if n else []
    if len(missing):
        values = at.to_pylist()
        for i in missing:
            text = provenance[int(i)].as_py()
            value = (orjson.loads(text) or {}).get("collected_at") if text else None
            values[i] = value if isinstance(value, str) else None
        at = pa.array(values, pa.string())
    encoded = at.dictionary_encode()
    parsed = [_seconds(v) for v in encoded.dictionary.to_pylist()]
    lookup = np.array([np.iinfo(np.int64).min if s is None else s for s in parsed] or [0], dtype=np.int64)
    indices = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    return np.where(indices >= 0, lookup[np.maximum(indices, 0)], np.iinfo(np.int64).min)


def record_versions(batch: pa.RecordBatch | pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """(version, usable) per row: ``observation_version`` of each record row; ``usable`` False where the row
    has neither an edit time nor a collection time (the sink refuses it)."""
    none = np.iinfo(np.int64).min
    edit = np.full(batch.num_rows, none, dtype=np.int64)
    for name in ("edited_at", "deleted_at", "created_at"):
        if name in batch.schema.names:
            edit = np.maximum(edit, _epoch_seconds(_column(batch, name)))
    collected = (collected_seconds(_column(batch, "provenance")) if "provenance" in batch.schema.names
                 else np.full(batch.num_rows, none, dtype=np.int64))
    has_edit, has_collected = edit != none, collected != none
    edit = np.where(has_edit, edit, collected)
    since = np.clip(edit - EPOCH, 0, MAX_EDIT)
    delay = np.where(has_collected, np.clip(collected - edit, 0, MAX_DELAY), 0)
    usable = has_edit | has_collected
    return np.where(usable, (since << DELAY_BITS) | delay, 0), usable


def _values(batch: pa.RecordBatch | pa.Table, name: str) -> list:
    column = _column(batch, name)
    if name in TIME_COLUMNS:
        return instants(column)
    if name in JSON_COLUMNS:
        fragment = orjson.Fragment
        return [None if v is None else fragment(v) for v in column.to_pylist()]
    return column.to_pylist()


def record_documents(batch: pa.RecordBatch | pa.Table, tenant: str) -> Encoded:
    """The bulk documents of a batch of record rows (``RECORDS_SCHEMA`` columns, the part's order)."""
    names = batch.schema.names
    columns = [_values(batch, name) for name in names]
    by_name = dict(zip(names, columns))
    nothing = [None] * batch.num_rows
    lemmas = [lemmas_of(c, t, lang) for c, t, lang in zip(by_name.get("text_clean") or nothing,
                                                         by_name.get("text") or nothing, by_name.get("lang") or nothing)]
    dumps = orjson.dumps
    sources = [dumps(dict(zip(names, row)) if lemma is None else {**dict(zip(names, row)), LEMMA_FIELD: lemma})
               for row, lemma in zip(zip(*columns), lemmas)]
    keys, created = by_name["key"], by_name["created_at"]
    versions, usable = record_versions(batch)
    tenants = by_name.get("tenant") or [None] * batch.num_rows
    limit = ID_MAX_BYTES // 4
    fast = [ok and type(k) is str and 0 < len(k) <= limit and (t is None or t == tenant) and c is not None
            for ok, k, t, c in zip(usable.tolist(), keys, tenants, created)]
    slow_rows = [i for i, ok in enumerate(fast) if not ok]
    slow = list(arrow_to_records(batch.take(pa.array(slow_rows, pa.int64())))) if slow_rows else []
    routes = [c[:7] if c is not None and c[-1:] == "Z" and c[4:5] == "-" else None for c in created]
    return Encoded(keys, routes, versions.tolist(), sources, fast, slow)


def edge_documents(edges: pa.RecordBatch | pa.Table, versions: list[int]) -> Encoded:
    """The bulk documents of edge rows (``EDGES_SCHEMA``), each versioned with ``versions[i]`` (its record's)."""
    columns = [_values(edges, name) for name in EDGE_FIELDS]
    dumps = orjson.dumps
    sources = [dumps(dict(zip(EDGE_FIELDS, row))) for row in zip(*columns)]
    types, srcs, dsts, created = columns[0], columns[1], columns[2], columns[3]
    ids = [edge_key(t, s, d) for t, s, d in zip(types, srcs, dsts)]
    routes = [c[:7] if c is not None and c[-1:] == "Z" and c[4:5] == "-" else None for c in created]
    return Encoded(ids, routes, versions, sources, [True] * len(ids), [])


def iter_fast(encoded: Encoded) -> Iterator[tuple[str, str | None, int, bytes]]:
    """(id, route, version, source) of the rows the fast path covers."""
    for i, ok in enumerate(encoded.fast):
        if ok:
            yield encoded.ids[i], encoded.routes[i], encoded.versions[i], encoded.sources[i]
