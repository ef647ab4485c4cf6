"""The raw line of the REST sources and of webhook deliveries: the API's answer (or the delivered body) as
received, wrapped with what it does not say; written by ``wrap_line`` (the sync engines in ``sources/``, the
webhook landing in ``lake/landing.py``), read back into records by ``normalize_envelopes``.

``{"crawl": {"endpoint": ..., "host"/"package"/"workspace": ..., "retrieved_at": ...}, "response": <body>}``

A record key needs the forum host, app package or workspace id, which the answers themselves do not
carry; the envelope keeps them next to the untouched body so a normalizer needs nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import IO, Any

import orjson

from crawl_assets.normalize.build import Batch, InputError, Item, iter_json_lines, parse_instant
from crawl_assets.schema.record import Rejection

# The "_" of the raw line a collector writes when a post it stored is gone (X, Telegram): a tombstone to the
# normalizer
DELETED = "crawl_assets.deleted"


def wrap_line(body: bytes, **crawl: Any) -> bytes:
    """One raw lake line. The body's bytes are kept; only newlines, which in valid JSON can only be
    whitespace between tokens (inside strings they are escaped), become spaces so it fits on one line."""
    return b'{"crawl":' + orjson.dumps(crawl) + b',"response":' + body.replace(b"\r", b" ").replace(b"\n", b" ") + b"}"


__all__ = ["DELETED", "wrap_line", "iter_envelopes", "crawl_field", "retrieved_at", "normalize_envelopes"]


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
