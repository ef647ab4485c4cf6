"""Serialized output of a record document: its JSON line and its edges' JSON lines, into a dedupe block; and the
rewrite edited X posts get once a run has seen all their versions (``EditHistories``, ``rewritten_line``).

Edited X posts: every version has its own id, all versions are one post with a history. X gives each version of an
edited post a new id and lists them all, oldest first, in ``edit_history_tweet_ids`` (an archive in ``edit_info``;
normalizers put both in ``metadata.edit_history_tweet_ids``). A version observed before it was edited lists only the
ids up to itself, so no single observation is enough: ``EditHistories`` gathers every history seen in a run, joins
the ones that share an id, and ``resolve`` then rewrites each version's record the same way whatever order the
versions came in:

- the latest version (the highest id) is the live record: ``metadata.edit_history_tweet_ids`` lists every
  version known, and ``edited_at`` is its own ``created_at`` (the time of the last edit);
- every earlier version keeps its text (what it said then) and gets ``metadata.superseded_by``, the live
  version's key, plus the full history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

import msgspec

from crawl_assets.normalize.dedupe import BlockBuilder
from crawl_assets.normalize.edges import EDGE_COLUMNS, document_edges
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
        versions = metadata.get(FIELD)
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


# -- edited posts --------------------------------------------------------------------------------------------
FIELD = "edit_history_tweet_ids"


def history_of(doc: dict[str, Any]) -> list[str] | None:
    """The version ids a record lists (more than one: an edited post), else None."""
    history = (doc.get("metadata") or {}).get(FIELD)
    if isinstance(history, list) and len(history) > 1 and all(isinstance(i, str) and i.isdigit() for i in history):
        return history
    return None


class EditHistories:
    """The edit histories of one run of one platform's records, joined into posts (sets of version ids)."""

    def __init__(self, platform: str) -> None:
        self.platform = platform
        self._post: dict[str, int] = {}  # version id -> post number
        self._versions: list[set[str]] = []

    def __bool__(self) -> bool:
        return bool(self._versions)

    def add(self, history: Iterable[str]) -> None:
        """One observed history (a list of version ids)."""
        ids = set(history)
        posts = {self._post[i] for i in ids if i in self._post}
        if posts:
            keep = min(posts)
            for other in posts - {keep}:
                ids |= self._versions[other]
                self._versions[other] = set()
        else:
            keep = len(self._versions)
            self._versions.append(set())
        self._versions[keep] |= ids
        for version in self._versions[keep]:
            self._post[version] = keep

    def merge(self, histories: Iterable[list[str]]) -> None:
        for history in histories:
            self.add(history)

    def keys(self) -> set[str]:
        """Record keys of every version known (the records ``resolve`` may change)."""
        return {f"{self.platform}:{version}" for version in self._post}

    def resolve(self, doc: dict[str, Any]) -> dict[str, Any] | None:
        """``doc`` rewritten as its post's live version or a superseded one; None when not an edited post's."""
        if doc.get("platform") != self.platform or doc.get("native_id") not in self._post:
            return None
        versions = sorted(self._versions[self._post[doc["native_id"]]], key=int)
        if len(versions) < 2:
            return None
        latest = versions[-1]
        metadata = {k: v for k, v in (doc.get("metadata") or {}).items() if k != "superseded_by"}
        metadata[FIELD] = versions
        doc = {**doc, "metadata": metadata}
        if doc["native_id"] == latest:
            doc["edited_at"] = doc["edited_at"] or doc["created_at"]
        else:
            metadata["superseded_by"] = f"{self.platform}:{latest}"
        return doc
