"""Serialized output of a record document: its JSON line and its edges' JSON lines, into a dedupe block."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import msgspec

from crawl_assets.normalize.dedupe import BlockBuilder
from crawl_assets.normalize.edges import EDGE_COLUMNS, document_edges
from crawl_assets.normalize.edits import FIELD as EDIT_HISTORY
from crawl_assets.normalize.edits import history_of
from crawl_assets.schema.record import Record

_NEVER = float("-inf")
# msgspec writes UTC datetimes with "Z", dict keys in insertion order and shortest float reprs: the same
# JSON as Record.model_dump_json for a document (property-tested), in about half of orjson's time here.
_ENCODER = msgspec.json.Encoder()
_encode = _ENCODER.encode
_encode_into = _ENCODER.encode_into


def record_line(doc: dict[str, Any]) -> bytes:
    """The record's JSON (no newline); a value msgspec cannot write goes through pydantic."""
    try:
        return _encode(doc)
    except (TypeError, ValueError, OverflowError):
        return _pydantic_line(doc)


def _pydantic_line(doc: dict[str, Any]) -> bytes:
    return Record.model_validate(doc).model_dump_json().encode()


# Edge lines are assembled from JSON pieces: field names once, src/created_at/platform/tenant once per record
# (shared by its edges), type and dst per edge: ~2x faster than encoding a Struct per edge, and the same
# bytes (msgspec encodes every piece; a property test compares with whole-object encoding).
_TYPE, _SRC, _DST, _AT, _PLATFORM, _TENANT = (
    (b"{" if i == 0 else b",") + _encode(name) + b":" for i, name in enumerate(EDGE_COLUMNS)
)
_TYPES: dict[str, bytes] = {}


def edge_lines(doc: dict[str, Any]) -> bytes:
    """The record's edges, one JSON line each (newline-terminated); empty when it has none."""
    parts: list[bytes] = []
    src = tail = b""
    for kind, source, dst, at, platform, tenant in document_edges(doc):
        if not tail:
            src = _SRC + _encode(source) + _DST
            tail = _AT + _encode(at) + _PLATFORM + _encode(platform) + _TENANT + _encode(tenant) + b"}\n"
        kind_json = _TYPES.get(kind)
        if kind_json is None:
            kind_json = _TYPES[kind] = _TYPE + _encode(kind)
        parts += (kind_json, src, _encode(dst), tail)
    return b"".join(parts)


def add_document(block: BlockBuilder, doc: dict[str, Any]) -> None:
    """Append a record document to ``block``: ranked by its key and times, its line (``record_line``) as the
    main payload and its edge lines as the side payload, both newline-terminated, ready to write as they are.
    The line is encoded in place, at the end of the block's buffer (no copy per record)."""
    main = block.main
    start = len(main)
    try:
        _encode_into(doc, main, -1)
    except (TypeError, ValueError, OverflowError):
        del main[start:]
        main += _pydantic_line(doc)
    main += b"\n"
    block.side += edge_lines(doc)
    commit_document(block, doc)


def commit_document(block: BlockBuilder, doc: dict[str, Any]) -> None:
    """End a document's observation in ``block`` (its payloads appended): ranked by its key and times, its
    edit history and tombstone noted."""
    metadata = doc["metadata"]
    if metadata:
        if metadata.get("tombstone"):
            block.unavailable += 1
        versions = metadata.get(EDIT_HISTORY)
        if isinstance(versions, list) and len(versions) > 1:  # cheap test first: most posts were never edited
            history = history_of(doc)
            if history is not None:
                block.histories.append(history)
    edited, collected = rank_of(doc)
    block.commit(doc["key"], edited, collected)


def rank_of(doc: dict[str, Any]) -> tuple[float, float]:
    """(edit time, collection time) as epoch seconds (-inf when unknown): the dedupe ranking of a document."""
    edited: datetime | None = doc["edited_at"]
    collected: datetime | None = doc["provenance"]["collected_at"]
    return (
        edited.timestamp() if edited is not None else _NEVER,
        collected.timestamp() if collected is not None else _NEVER,
    )


def rewritten_line(payload: bytes, rewrite: Callable[[dict[str, Any]], dict[str, Any] | None]) -> bytes:
    """A record line (newline-terminated) passed through ``rewrite`` (a document -> document or None: as it is)."""
    doc = Record.model_validate_json(payload).model_dump()
    changed = rewrite(doc)
    return payload if changed is None else record_line(changed) + b"\n"
