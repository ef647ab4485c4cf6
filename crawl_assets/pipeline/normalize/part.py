"""What a batch's normalized part is written with: its rows, the tally of its keys, and the marks it leaves on
earlier parts whose edited posts it supersedes.

Record documents as rows of the records table (``RECORDS_SCHEMA``), serialized where they are born (a
normalizing worker) and read into Arrow in bulk by Arrow's own JSON reader: the process that writes a part
does no Python work per record.

A row line is the record's JSON (``output.record_line``) with the table's own encodings already applied:
each JSON column (``JSON_COLUMNS``) as its sorted-key JSON text, absent lists as empty ones, ``deleted`` as a
boolean. ``rows_table`` of row lines equals ``records_to_arrow`` of the same records parsed from their JSON
(tested on every sample input and on generated edge cases); a chunk Arrow's reader refuses (a time it cannot
parse, a value of another type) is converted the slow way, record by record, with the same result.

The keys a part is written with, kept as 64-bit hashes (8 bytes each, not a Python string per record), so
normalizing a batch of a million records does not hold a million keys: which keys came more than once (found
exactly, by reading the written part's key column back only when two hashes are equal) and whether a few
given keys are among them.

Edited X posts across raw batches: the version records an earlier part holds are marked superseded
when a later batch brings a newer version (``crawl_assets.normalize.output.EditHistories`` resolves within a batch).
"""

from __future__ import annotations

import io
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec
import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import json as pa_json

from crawl_assets.core import catalog
from crawl_assets.lake import Lake, RawBatch
from crawl_assets.lake.tables import JSON_COLUMNS, LIST_COLUMNS, RECORDS_SCHEMA, arrow_to_records, records_to_arrow
from crawl_assets.normalize.dedupe import BlockBuilder, key_hash
from crawl_assets.normalize.output import FIELD, EditHistories, commit_document, record_line

BATCH_ROWS = 8_192  # rows of an earlier part read at a time when looking for given keys
_encode_into = msgspec.json.Encoder().encode_into
# orjson writes UTC datetimes with "Z" (as msgspec does in record lines), so a JSON column holds the same
# text as when the record's line is parsed and the column re-encoded (``records_to_arrow``)
_JSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_UTC_Z
_PARSE = pa_json.ParseOptions(explicit_schema=RECORDS_SCHEMA, unexpected_field_behavior="ignore")


def row_of(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with the records table's encodings applied (JSON columns as text, lists, ``deleted``)."""
    row = dict(doc)
    for column in JSON_COLUMNS:
        value = row.get(column)
        if value is not None:
            row[column] = orjson.dumps(value, option=_JSON_OPTIONS).decode()
    for column in LIST_COLUMNS:
        if row.get(column) is None:
            row[column] = []
    row["deleted"] = bool(row.get("deleted", False))
    return row


def add_row(block: BlockBuilder, doc: dict[str, Any]) -> None:
    """Append a record document to ``block`` as a row line (newline-terminated), ranked for the dedupe as
    ``output.add_document`` ranks it, its edit history and tombstone noted. A value the fast encoders refuse
    goes through the record's JSON line first (``record_line``, pydantic as the last resort)."""
    main = block.main
    start = len(main)
    try:
        _encode_into(row_of(doc), main, -1)
    except (TypeError, ValueError, OverflowError):
        del main[start:]
        main += msgspec.json.encode(row_of(orjson.loads(record_line(doc))))
    main += b"\n"
    commit_document(block, doc)


def rows_table(lines: bytes) -> pa.Table:
    """Row lines (``add_row``'s, newline-terminated) as a table with ``RECORDS_SCHEMA``, in their order."""
    if not lines:
        return RECORDS_SCHEMA.empty_table()
    try:
        options = pa_json.ReadOptions(block_size=len(lines) + 1)
        return pa_json.read_json(io.BytesIO(lines), read_options=options, parse_options=_PARSE)
    except pa.ArrowInvalid:
        return records_to_arrow(_record_of(orjson.loads(line)) for line in lines.splitlines())


def _record_of(row: dict[str, Any]) -> dict[str, Any]:
    """A parsed row line as the record it encodes (JSON columns parsed back)."""
    for column in JSON_COLUMNS:
        if row.get(column) is not None:
            row[column] = orjson.loads(row[column])
    return row


class KeyTally:
    """Hashes of the keys seen, in bulk appends; ``repeated`` names the keys seen more than once."""

    def __init__(self) -> None:
        self._hashes = array("Q")

    def update(self, keys: Iterable[str]) -> None:
        self._hashes.extend(key_hash(k) for k in keys)

    def __len__(self) -> int:
        return len(self._hashes)

    def holds(self, keys: Iterable[str]) -> set[str]:
        """Those of ``keys`` seen (a 64-bit hash match: for the few keys an edit history names)."""
        keys = list(keys)
        if not keys or not self._hashes:
            return set()
        found = np.isin(np.array([key_hash(k) for k in keys], dtype=np.uint64), np.frombuffer(self._hashes, np.uint64))
        return {k for k, hit in zip(keys, found) if hit}

    def repeated(self, read_keys: Iterator[Iterable[str]]) -> list[str]:
        """The keys seen more than once, sorted. ``read_keys`` gives the keys again (the written part's key
        column, a batch at a time); it is read only when two hashes are equal, to name the keys exactly."""
        hashes = np.sort(np.frombuffer(self._hashes, np.uint64))
        twice = np.unique(hashes[1:][hashes[1:] == hashes[:-1]])
        if not len(twice):
            return []
        suspects = set(twice.tolist())
        counts: Counter[str] = Counter(k for keys in read_keys for k in keys if key_hash(k) in suspects)
        return sorted(k for k, n in counts.items() if n > 1)


# the stored metadata text (sorted-key JSON) of a record listing more than one version
_MANY_VERSIONS = r'"edit_history_tweet_ids":\["[0-9]+","'


def resolved(edits: EditHistories, row: dict[str, Any]) -> dict[str, Any]:
    """``row`` as its post's live or superseded version (unchanged when it is not an edited post's)."""
    return (edits.resolve(row) or row) if edits else row


def earlier_versions(lake: Lake, batch: RawBatch, table: str, edits: EditHistories, present: set[str]) -> list[dict[str, Any]]:
    """The last stored observation of every version this batch's histories name but do not hold, from
    earlier parts, resolved (an older version becomes superseded by the newest one): they go into this
    batch's part so the index learns of the edit."""
    wanted = edits.keys() - present if edits else set()
    if not wanted:
        return []
    m = batch.manifest
    earlier = [p for p in lake.part_ids(table, m.tenant, m.platform, m.source) if p < m.batch_id]
    latest: dict[str, dict[str, Any]] = {}
    for rows in rows_with_keys(lake, table, m.tenant, m.platform, m.source, earlier, wanted):
        for row in arrow_to_records(rows):
            latest[row["key"]] = row
    return [resolved(edits, row) for row in latest.values()]


def rows_with_keys(lake: Lake, table: str, tenant: str, platform: str, source: str, parts: Iterable[str],
                   keys: Iterable[str] | pa.Array, columns: list[str] | None = None) -> Iterator[pa.Table]:
    """The rows of ``parts`` (in order, rows in part order) whose key is one of ``keys``, a record batch at a
    time: key columns first, whole rows only of the parts holding a hit (a large part is never read whole)."""
    values = pc.unique(keys) if isinstance(keys, pa.Array) else pa.array(sorted(set(keys)), pa.string())
    if not len(values):
        return
    for part_id in parts:
        part = lake.table_part(table, tenant, platform, source, part_id)
        if not any(pc.any(pc.is_in(rows.column(0), value_set=values)).as_py()
                   for rows in lake.iter_part_batches(part, columns=["key"], batch_size=BATCH_ROWS)):
            continue
        for rows in lake.iter_part_batches(part, columns=columns, batch_size=BATCH_ROWS):
            hit = pc.is_in(rows.column("key"), value_set=values)
            if pc.any(hit).as_py():
                yield pa.Table.from_batches([rows]).filter(hit)


def stored_histories(lake: Lake, batch: RawBatch, table: str) -> dict[str, list[list[str]]]:
    """The histories earlier parts hold listing more than one version, by each version id they list: a version
    this batch reads after its post's newer version was stored (listing only itself) is then resolved as
    superseded too, whichever batch came first. Only the metadata column is read, a record batch at a time,
    rows filtered by a regex (an earlier part is never read whole)."""
    m = batch.manifest
    found: dict[str, list[list[str]]] = {}
    if not catalog.keeps_edit_histories(m.platform):
        return found
    for part_id in lake.part_ids(table, m.tenant, m.platform, m.source):
        if part_id >= m.batch_id:
            continue
        part = lake.table_part(table, m.tenant, m.platform, m.source, part_id)
        for rows in lake.iter_part_batches(part, columns=["metadata"]):
            column = rows.column("metadata")
            for text in column.filter(pc.fill_null(pc.match_substring_regex(column, _MANY_VERSIONS), False)).to_pylist():
                history = orjson.loads(text).get(FIELD)
                if isinstance(history, list):
                    for version in history:
                        found.setdefault(version, []).append(history)
    return found
