"""Record documents as rows of the records table (``RECORDS_SCHEMA``), serialized where they are born (a
normalizing worker) and read into Arrow in bulk by Arrow's own JSON reader: the process that writes a part
does no Python work per record.

A row line is the record's JSON (``output.record_line``) with the table's own encodings already applied:
each JSON column (``JSON_COLUMNS``) as its sorted-key JSON text, absent lists as empty ones, ``deleted`` as a
boolean. ``rows_table`` of row lines equals ``records_to_arrow`` of the same records parsed from their JSON
(tested on every sample input and on generated edge cases); a chunk Arrow's reader refuses (a time it cannot
parse, a value of another type) is converted the slow way, record by record, with the same result.
"""

from __future__ import annotations

import io
from typing import Any

import msgspec
import orjson
import pyarrow as pa
from pyarrow import json as pa_json

from crawl_assets.lake.tables import JSON_COLUMNS, LIST_COLUMNS, RECORDS_SCHEMA, records_to_arrow
from crawl_assets.normalize.dedupe import BlockBuilder
from crawl_assets.normalize.output import commit_document, record_line

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
