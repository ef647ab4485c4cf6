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


ENVELOPE_EXPECTED = "expected an envelope {\"crawl\": {...}, \"response\": ...}"


def iter_envelopes(stream: IO[bytes], batch: Batch, bare: Callable[[Any], bool] | None = None,
                   expected: str = ENVELOPE_EXPECTED) -> Iterator[tuple[int, bytes, dict[str, Any], Any] | Rejection]:
    """(line, raw, crawl, response) per line, or a rejection naming the line (``expected`` says what) when it is
    not an envelope; a line ``bare`` accepts (an answer saved without its envelope) comes with an empty crawl."""
    for line, raw, obj in iter_json_lines(stream, batch):
        if isinstance(obj, InputError):
            yield batch.reject(line, str(obj), raw)
        elif isinstance(obj, dict) and isinstance(obj.get("crawl"), dict) and "response" in obj:
            yield line, raw, obj["crawl"], obj["response"]
        elif bare is not None and bare(obj):
            yield line, raw, {}, obj
        else:
            yield batch.reject(line, expected, raw)


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


def normalize_envelopes(stream: IO[bytes], batch: Batch, read: EnvelopeReader, bare: Callable[[Any], bool] | None = None,
                        expected: str = ENVELOPE_EXPECTED) -> Iterator[Item]:
    """Every envelope line (and line ``bare`` accepts) through ``read``; a line that is no envelope, or an
    ``InputError`` while reading it, becomes a rejection naming file and line, and the stream goes on."""
    for entry in iter_envelopes(stream, batch, bare, expected):
        if not isinstance(entry, tuple):
            yield entry
            continue
        line, raw, crawl, response = entry
        try:
            yield from read(line, raw, crawl, response, batch.provenance(line, retrieved_at(crawl)))
        except InputError as exc:
            yield batch.reject(line, str(exc), raw)
