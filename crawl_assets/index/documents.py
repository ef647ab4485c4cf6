"""Index documents as the bulk sink sends them: their ``_id``, their JSON with ``text_lemma``, the one ``bytes``
per document holding its action and source lines, and the same built straight from Arrow batches of the lake.

One prepared document is one ``bytes``: its action line then its source line, each ending in "\\n", so a
bulk body is the plain join of a batch's lines. Bytes are atoms (the garbage collector never tracks them;
a dataclass per document once made the collector ~30% of the client's CPU time), and one object per
document is the least the producer can allocate. What a dead letter needs (``_id``, index, version,
source) is read back from the line by ``unpack``, which only a failed document pays for.

``text_lemma`` holds the lemmas of a record's text (docs/SCHEMA.md, "Word forms"), written by us, not by an
analyzer (Elasticsearch's ``persian_stem`` does not reach verbs, possessives or colloquial forms). It is
indexed but kept out of ``_source`` by the template, so every writer of records adds it: the bulk sink (dicts,
and rows from Arrow here) and ``es reindex``'s copy.

From Arrow, a record's source is the JSON that ``lake.tables.arrow_to_records``, ``with_lemmas`` and
``source_bytes`` give for its row, byte for byte, without parsing the JSON columns (their stored text is
spliced in as an ``orjson.Fragment``) and with times formatted a column at a time. Versions are
``observation_version`` of the same row, computed over whole columns. Rows the fast path does not cover
(another tenant, an unusual key, no time to version by) are handed back as dicts, for the sink's own checks and
dead letters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from hashlib import blake2b as _blake2b
from itertools import compress
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.index.naming import DELAY_BITS, EPOCH, MAX_DELAY, MAX_EDIT, RoutingError, _seconds
from crawl_assets.lake.tables import JSON_COLUMNS, TIME_COLUMNS, arrow_to_records
from crawl_assets.persian.lemma import lemma_text

ID_MAX_BYTES = 512
_ACTION_END = b',"version_type":"external_gte"}}\n'
_LINE = b'%s%s,"version":%d%s%s\n'  # head, JSON _id, version, _ACTION_END, source


def edge_id(doc: Mapping[str, Any]) -> str:
    """Deterministic ``_id`` of an edge from its type, src and dst (bounded length whatever the keys)."""
    kind, src, dst = doc.get("type"), doc.get("src"), doc.get("dst")
    if not kind or src is None or dst is None:
        raise RoutingError("an edge needs type, src and dst")
    return edge_key(str(kind), str(src), str(dst))


def edge_key(kind: str, src: str, dst: str) -> str:
    """``edge_id`` of an edge's parts, known to be present."""
    return kind + ":" + _blake2b((src + "\x1f" + dst).encode(), digest_size=16).hexdigest()


def document_id(doc: Mapping[str, Any], family: str) -> str:
    """``_id``: the record ``key``; an edge's deterministic id; an author's key (or platform:author_id)."""
    if family == "edges":
        return edge_id(doc)
    key = doc.get("key")
    if type(key) is str and 0 < len(key) <= ID_MAX_BYTES // 4:  # the common case: short enough in any encoding
        return key
    if not key and family == "authors" and doc.get("platform") and doc.get("author_id"):
        key = f"{doc['platform']}:{doc['author_id']}"
    if not key or not isinstance(key, str):
        raise RoutingError("field 'key' is missing or not a string")
    if len(key.encode()) > ID_MAX_BYTES:
        raise RoutingError(f"field 'key' is longer than {ID_MAX_BYTES} bytes")
    return key


def _json_default(value: Any) -> Any:
    """Values orjson does not know but that have one obvious JSON form (pandas/numpy scalars, Decimal)."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return value.item()
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(f"cannot serialize a {type(value).__name__} value")


def source_bytes(doc: Mapping[str, Any]) -> bytes:
    """The document's JSON, as indexed."""
    try:
        return orjson.dumps(doc)
    except TypeError:  # non-string keys, numpy/pandas values: slower options, so only when needed
        return orjson.dumps(doc, default=_json_default, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY)


def action_head(index: str) -> bytes:
    """The start of every action line into ``index`` (pre-serialized once per index)."""
    return b'{"index":{"_index":%s,"_id":' % orjson.dumps(index)


def prepared_line(head: bytes, doc_id: str, version: int, source: bytes) -> bytes:
    """One document's action and source lines as one ``bytes`` (one allocation: the source is copied once)."""
    return _LINE % (head, orjson.dumps(doc_id), version, _ACTION_END, source)


def unpack(line: bytes) -> tuple[str, str, int, bytes]:
    """``(doc_id, index, version, source)`` of a prepared line (a JSON action line never holds a raw newline)."""
    cut = line.index(b"\n")
    action = orjson.loads(line[:cut])["index"]
    return action["_id"], action["_index"], action["version"], line[cut + 1:-1]


# ``text_lemma``

LEMMA_FIELD = "text_lemma"
LEMMA_META = "text_lemma_version"  # the records mapping's _meta key naming the lemmatizer of its documents


def lemmas_of(text_clean: Any, text: Any, lang: Any) -> str | None:
    """A record's ``text_lemma`` from its fields (``text_clean``, else ``text``; Arabic stems when ``lang`` is
    ``ar``); None when it has no text."""
    chosen = text_clean or text
    return lemma_text(chosen, lang) if isinstance(chosen, str) and chosen else None


def with_lemmas(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """The record with ``text_lemma`` (``lemmas_of``), as the bulk sink sends it."""
    lemmas = lemmas_of(doc.get("text_clean"), doc.get("text"), doc.get("lang"))
    return doc if lemmas is None else {**doc, LEMMA_FIELD: lemmas}


def without_lemmas(source: bytes) -> bytes:
    """A document's JSON as it was given to the sink (a dead letter keeps the caller's document, not ours)."""
    if b'"text_lemma"' not in source:
        return source
    doc = orjson.loads(source)
    doc.pop(LEMMA_FIELD, None)
    return orjson.dumps(doc)


def lemma_of(item: str, what: str, lang: str | None = None) -> str:
    """The lemma a word or hashtag is counted under (a hashtag's words joined by ``_`` again)."""
    if what == "hashtags":
        return "_".join(lemma_text(part, lang) or part for part in item.split("_"))
    return lemma_text(item, lang) or item


def group_forms(items: list[str], what: str, lang: str | None = None) -> dict[str, list[str]]:
    """Lemma -> its forms among ``items``, in the items' order (the first lemma seen first)."""
    groups: dict[str, list[str]] = {}
    for item in items:
        groups.setdefault(lemma_of(item, what, lang), []).append(item)
    return groups


# Documents from Arrow batches

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
    by_name = {name: _values(batch, name) for name in ("key", "created_at", "tenant", "text_clean", "text", "lang")
               if name in names}
    nothing = [None] * batch.num_rows
    lemmas = [lemmas_of(c, t, lang) for c, t, lang in zip(by_name.get("text_clean") or nothing,
                                                         by_name.get("text") or nothing, by_name.get("lang") or nothing)]
    keys, created = by_name["key"], by_name["created_at"]
    sources = json_sources(batch, lemmas, {"created_at": created})
    versions, usable = record_versions(batch)
    tenants = by_name.get("tenant") or nothing
    limit = ID_MAX_BYTES // 4
    fast = [ok and type(k) is str and 0 < len(k) <= limit and (t is None or t == tenant) and c is not None
            for ok, k, t, c in zip(usable.tolist(), keys, tenants, created)]
    slow_rows = [i for i, ok in enumerate(fast) if not ok]
    slow = list(arrow_to_records(batch.take(pa.array(slow_rows, pa.int64())))) if slow_rows else []
    routes = [c[:7] if c is not None and c[-1:] == "Z" and c[4:5] == "-" else None for c in created]
    return Encoded(keys, routes, versions.tolist(), sources, fast, slow)


def dict_sources(batch: pa.RecordBatch | pa.Table, lemmas: list[str | None] | None) -> list[bytes]:
    """Each row's JSON as ``source_bytes(with_lemmas(row))`` (``lemmas[i]``: row ``i``'s ``text_lemma``; None:
    none), through a dict per row: what ``json_sources`` builds in Arrow, and its path for the rows it does not
    cover."""
    names = batch.schema.names
    columns = [_values(batch, name) for name in names]
    dumps = orjson.dumps
    return [dumps(dict(zip(names, row)) if lemma is None else {**dict(zip(names, row)), LEMMA_FIELD: lemma})
            for row, lemma in zip(zip(*columns), lemmas or [None] * batch.num_rows)]


# orjson's escapes rebuilt in Arrow; a row with another control character (escaped as \\b, \\f or \\u00XX) takes
# the dict path
_ESCAPES = {ord("\\"): ("\\", "\\\\"), ord('"'): ('"', '\\"'), ord("\n"): ("\n", "\\n"),
            ord("\r"): ("\r", "\\r"), ord("\t"): ("\t", "\\t")}
_OTHER_CONTROL = np.array([c < 0x20 and c not in _ESCAPES for c in range(256)])


def _escaped(values: pa.Array, bad: np.ndarray, rows: np.ndarray | None = None) -> pa.Array:
    """Each string escaped as orjson writes it between its quotes (its bytes scanned once: most columns hold
    nothing to escape); marks in ``bad`` the rows (``rows[i]`` for value ``i``, else ``i``) holding a control
    character not rebuilt."""
    if not len(values):
        return values
    offsets = np.frombuffer(values.buffers()[1], np.int32, len(values) + 1, values.offset * 4)
    data = np.frombuffer(values.buffers()[2] or b"", np.uint8)[offsets[0]:offsets[-1]]
    mask = (data < 0x20) | (data == 0x22) | (data == 0x5C)  # (comparisons: faster than a table lookup per byte)
    if not mask.any():
        return values
    found = set(data[mask].tolist())
    if any(_OTHER_CONTROL[c] for c in found):
        at = np.flatnonzero(_OTHER_CONTROL[data]) + offsets[0]
        hit = np.searchsorted(offsets, at, side="right") - 1
        bad[hit if rows is None else rows[hit]] = True
    for char, (old, new) in _ESCAPES.items():  # the backslash first: the others' escapes add backslashes
        if char in found:
            values = pc.replace_substring(values, old, new)
    return values


def _quoted(values: pa.Array, bad: np.ndarray, rows: np.ndarray | None = None) -> pa.Array:
    """Each string as orjson writes it, ``null`` for null."""
    return pc.fill_null(pc.binary_join_element_wise('"', _escaped(values, bad, rows), '"', ""), "null")


def _json_column(column: pa.Array, name: str, bad: np.ndarray, times: Mapping[str, list[str | None]] | None
                 ) -> tuple[str, pa.Array, str] | None:
    """(text before, each value's JSON text, text after) for a column's values as ``dict_sources`` gives them to
    orjson (quotes go in the texts around a string column without nulls); None for a type not rebuilt here.
    ``times``: time columns' ``instants`` the caller already has."""
    kind = column.type
    if name in TIME_COLUMNS:
        if not pa.types.is_timestamp(kind):
            return None
        text = times.get(name) if times else None
        text = instants(column) if text is None else text
        return "", _quoted(pa.array(text, pa.string()), bad), ""
    if name in JSON_COLUMNS:
        return ("", pc.fill_null(column, "null"), "") if kind == pa.string() else None
    if kind == pa.string():
        if column.null_count:
            return "", _quoted(column, bad), ""
        return '"', _escaped(column, bad), '"'
    if kind == pa.bool_():
        return "", pc.fill_null(pc.if_else(column, "true", "false"), "null"), ""
    if pa.types.is_list(kind) and kind.value_type == pa.string():
        offsets = column.offsets.to_numpy()
        values = _quoted(column.flatten(), bad, np.repeat(np.arange(len(column)), np.diff(offsets)))
        lists = pa.ListArray.from_arrays(pa.array(offsets - offsets[0], pa.int32()), values, mask=column.is_null())
        return "", pc.fill_null(pc.binary_join_element_wise("[", pc.binary_join(lists, ","), "]", ""), "null"), ""
    return None


def json_sources(batch: pa.RecordBatch | pa.Table, lemmas: list[str | None] | None,
                 times: Mapping[str, list[str | None]] | None = None) -> list[bytes]:
    """``dict_sources`` built a column at a time in Arrow (each value's JSON text, then each row's object joined
    from them): no dict, Python value or orjson call per row. Rows or batches it does not cover (a control
    character other than newline, return and tab; another column type; a ``text_lemma`` column) take
    ``dict_sources``. ``times``: ``instants`` of time columns the caller already has."""
    names = batch.schema.names
    if not names or LEMMA_FIELD in names or len(set(names)) < len(names):
        return dict_sources(batch, lemmas)
    bad = np.zeros(batch.num_rows, dtype=bool)
    parts: list[Any] = []
    text = "{"
    for name in names:
        found = _json_column(_column(batch, name), name, bad, times)
        if found is None:
            return dict_sources(batch, lemmas)
        before, values, text_after = found
        parts += [text + orjson.dumps(name).decode() + ":" + before, values]
        text = text_after + ","
    parts.append(text[:-1])
    if lemmas is not None:
        lemma_array = pa.array(lemmas, pa.string())
        lemma_json = pc.binary_join_element_wise(',"' + LEMMA_FIELD + '":"', _escaped(lemma_array, bad), '"', "")
        parts.append(pc.fill_null(lemma_json, ""))
    parts.append("}")
    sources = pc.binary_join_element_wise(*parts, "").cast(pa.binary()).to_pylist()
    if bad.any():
        rows = np.flatnonzero(bad)
        some = None if lemmas is None else [lemmas[i] for i in rows]
        for i, source in zip(rows, dict_sources(batch.take(pa.array(rows)), some)):
            sources[i] = source
    return sources


def edge_documents(edges: pa.RecordBatch | pa.Table, versions: list[int]) -> Encoded:
    """The bulk documents of edge rows (``EDGES_SCHEMA``), each versioned with ``versions[i]`` (its record's)."""
    types, srcs, dsts, created = (_values(edges, name) for name in EDGE_FIELDS[:4])
    sources = json_sources(edges.select(list(EDGE_FIELDS)), None, {"created_at": created})
    ids = [edge_key(t, s, d) for t, s, d in zip(types, srcs, dsts)]
    routes = [c[:7] if c is not None and c[-1:] == "Z" and c[4:5] == "-" else None for c in created]
    return Encoded(ids, routes, versions, sources, [True] * len(ids), [])


def fast_lines(encoded: Encoded, heads: Mapping[Any, bytes], head_of: Callable[[Any], bytes]) -> list[bytes]:
    """``prepared_line`` of each row the fast path covers, in order: its action head is ``heads[route]``, or
    ``head_of(route)`` for a route not there yet."""
    dumps, end, line, known = orjson.dumps, _ACTION_END, _LINE, heads.get
    rows = zip(encoded.ids, encoded.routes, encoded.versions, encoded.sources, strict=True)
    return [line % (known(route) or head_of(route), dumps(doc_id), version, end, source)
            for doc_id, route, version, source in (rows if all(encoded.fast) else compress(rows, encoded.fast))]
