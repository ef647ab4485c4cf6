"""The raw line of the REST sources: the API's answer as received, wrapped with what it does not say.

``{"crawl": {"endpoint": ..., "host"/"package"/"workspace": ..., "retrieved_at": ...}, "response": <body>}``

A record key needs the forum host, app package or workspace id, which the answers themselves do not
carry; the envelope keeps them next to the untouched body so a normalizer needs nothing else. The line
format itself, ``wrap_line``, is ``crawl_assets.core.envelope``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import IO, Any

from crawl_assets.normalize.build import Batch, InputError, Item, iter_json_lines, parse_instant
from crawl_assets.schema.record import Rejection

__all__ = ["iter_envelopes", "crawl_field", "retrieved_at", "normalize_envelopes"]


def iter_envelopes(stream: IO[bytes], batch: Batch) -> Iterator[tuple[int, bytes, dict[str, Any], Any] | Rejection]:
    """(line, raw, crawl, response) per line, or a rejection naming the line when it is not an envelope."""
    for line, raw, obj in iter_json_lines(stream, batch):
        if isinstance(obj, InputError):
            yield batch.reject(line, str(obj), raw)
        elif not isinstance(obj, dict) or not isinstance(obj.get("crawl"), dict) or "response" not in obj:
            yield batch.reject(line, "expected an envelope {\"crawl\": {...}, \"response\": ...}", raw)
        else:
            yield line, raw, obj["crawl"], obj["response"]


def crawl_field(crawl: dict[str, Any], field: str) -> str:
    """A required envelope field (host, package, workspace) as a non-empty string."""
    value = crawl.get(field)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"field 'crawl.{field}': missing or empty")
    return value.strip()


def retrieved_at(crawl: dict[str, Any]) -> datetime | None:
    """When the envelope's answer was fetched (fills provenance.collected_at when the batch has none)."""
    value = crawl.get("retrieved_at")
    try:
        return parse_instant(value, "crawl.retrieved_at") if value else None
    except InputError:
        return None


EnvelopeReader = Callable[[int, bytes, dict[str, Any], Any, dict[str, Any]], Iterator[Item]]
"""``read(line, raw, crawl, response, provenance)``: the records and rejections of one envelope line."""


def normalize_envelopes(stream: IO[bytes], batch: Batch, read: EnvelopeReader) -> Iterator[Item]:
    """Every envelope line through ``read``; a line that is no envelope, or an ``InputError`` while reading
    it, becomes a rejection naming file and line, and the stream goes on."""
    for entry in iter_envelopes(stream, batch):
        if not isinstance(entry, tuple):
            yield entry
            continue
        line, raw, crawl, response = entry
        try:
            yield from read(line, raw, crawl, response, batch.provenance(line, retrieved_at(crawl)))
        except InputError as exc:
            yield batch.reject(line, str(exc), raw)
