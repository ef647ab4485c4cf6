"""Shared steps of every format's normalizer: reading lines, rejections, provenance, finishing a record, and
the envelope lines of the REST sources.

Each format module only maps its own fields; everything that must behave the same for every source
(line numbering, what a rejection holds, how ``text_clean``/``lang`` are filled, validation) lives here.

The envelope is the raw line of the REST sources and of webhook deliveries: the API's answer (or the delivered
body) as received, wrapped with what it does not say; written by ``wrap_line`` (the sync engines in
``sources/``, the webhook landing in ``lake/landing.py``), read back into records by ``normalize_envelopes``::

    {"crawl": {"endpoint": ..., "host"/"package"/"workspace": ..., "retrieved_at": ...}, "response": <body>}

A record key needs the forum host, app package or workspace id, which the answers themselves do not
carry; the envelope keeps them next to the untouched body so a normalizer needs nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import IO, Any

import orjson
from pydantic import ValidationError

from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.damage import INVALID_UTF8, bound_document, repair_json
from crawl_assets.normalize.lang import detect_lang, with_script
from crawl_assets.normalize.text import clean_text
from crawl_assets.schema.record import Media, Metrics, Record, Rejection, snippet_of

Document = dict[str, Any]
Item = Record | Document | Rejection
SERVICE_MESSAGE = "service message"
# Provenance flag of an observation that lacks context the platform gives elsewhere (a Discourse post read
# without its topic, a reply whose target the batch does not hold): what it lacks is kept from the item's last
# observation that had it (``pipeline.normalize.merge_earlier``, docs/SCHEMA.md "Observations of one item").
CONTEXT_MISSING = "context_missing"


class InputError(ValueError):
    """Bad input in one item; the message names the field (the item is rejected, the stream goes on)."""


class UnknownFormatError(ValueError):
    """The requested input format has no normalizer."""


MEDIA_FIELDS = tuple(Media.model_fields)
METRICS_FIELDS = tuple(Metrics.model_fields)


def media_doc(**fields: Any) -> dict[str, Any]:
    """A media entry with every ``Media`` field present (null when unknown), in schema order."""
    return {name: fields.get(name) for name in MEDIA_FIELDS}


class Batch:
    """Per-stream state: the file name for messages and the provenance shared by its records.

    Normalizers build each record as a plain *document* (dict in ``Record`` field order, datetimes as
    aware UTC ``datetime``), typed by construction. With ``validate=True`` (the default) it is returned
    as a validated ``Record``; with ``validate=False`` the document itself is returned, which is ~3x
    cheaper and serializes (orjson, ``OPT_UTC_Z``) to the same JSON as ``Record.model_dump_json`` (a
    property test holds the two paths equal on arbitrary input).
    """

    def __init__(self, fmt: str, name: str, context: NormalizeContext, *, validate: bool = True) -> None:
        self.fmt = fmt
        self.name = name
        self.context = context
        self.validate = validate
        collected = context.collected_at
        if collected is not None:
            if collected.tzinfo is None:
                raise ValueError("NormalizeContext.collected_at must be timezone-aware")
            collected = collected.astimezone(timezone.utc)
        self._provenance = {
            "collected_at": collected,
            "method": context.method,
            "source": context.source,
            "format": fmt,
            "run_id": context.run_id,
            "raw_pointer": context.raw_pointer,
            "raw_line": None,
            "flags": (),  # never appended to in place: ``damage.with_flag`` copies
        }
        self.line_flags: dict[int, list[str]] = {}  # provenance flags of the items of one line (or ordinal)

    def provenance(self, line: int, collected_at: datetime | None = None) -> dict[str, Any]:
        """The batch provenance pointing at one line; a per-item collection time fills a missing one."""
        provenance = dict(self._provenance, raw_line=line)
        if collected_at is not None and provenance["collected_at"] is None:
            provenance["collected_at"] = collected_at
        flags = self.line_flags.get(line)
        if flags:
            provenance["flags"] = list(flags)
        return provenance

    def flag_line(self, line: int, flag: str) -> None:
        """Give the records of ``line`` (an item's ordinal in whole documents) the provenance flag ``flag``."""
        flags = self.line_flags.setdefault(line, [])
        if flag not in flags:
            flags.append(flag)

    def reject(self, line: int | None, reason: str, raw: bytes | str | Any = b"", *, error: bool = True) -> Rejection:
        """A rejection naming this file and line, with the start of the raw item."""
        if not isinstance(raw, (bytes, str)):
            try:
                raw = orjson.dumps(raw, default=str)
            except (TypeError, orjson.JSONEncodeError):
                try:
                    raw = repr(raw)
                except RecursionError:  # nested deeper than repr can walk: say so, keep the batch going
                    raw = f"<{type(raw).__name__} nested too deeply to show>"
        return Rejection(name=self.name, line=line, reason=reason, snippet=snippet_of(raw), error=error)

    def finish(self, f: dict[str, Any]) -> Record | dict[str, Any]:
        """The record of the fields a format mapped: ``text_clean``, a missing ``lang``, defaults, order.
        ``search_text`` (when the format gives one) is ``text`` as a reader sees it (X escapes ``&<>`` as
        HTML entities): ``text_clean`` and language detection use it, ``text`` stays exact."""
        text = f.get("text") or ""
        search_text = f.get("search_text", text) if self.context.text_fields else ""  # "": nothing cleaned or detected
        lang = f.get("lang")
        metrics = f.get("metrics") or {}
        doc = {
            "key": f["key"],
            "platform": f["platform"],
            "tenant": self.context.tenant,
            "source": self.context.source,
            "kind": f["kind"],
            "native_id": f["native_id"],
            "author_id": f.get("author_id"),
            "author_handle": f.get("author_handle"),
            "created_at": f["created_at"],
            "edited_at": f.get("edited_at"),
            "deleted": f.get("deleted", False),
            "deleted_at": f.get("deleted_at"),
            "text": text,
            "text_clean": clean_text(search_text),
            "lang": lang if lang is not None else detect_lang(search_text, self.context.languages),
            "reply_to": f.get("reply_to"),
            "quote_of": f.get("quote_of"),
            "repost_of": f.get("repost_of"),
            "conversation_id": f.get("conversation_id"),
            "hashtags": f.get("hashtags") or [],
            "mentions": f.get("mentions") or [],
            "urls": f.get("urls") or [],
            "media": f.get("media") or [],
            "metrics": {name: metrics.get(name) for name in METRICS_FIELDS},
            "metadata": f.get("metadata") or {},
            "provenance": f["provenance"],
            "enrichment": {},
        }
        doc["lang"], doc["metadata"] = with_script(doc["lang"], search_text, doc["metadata"])  # Finglish
        return self.emit(doc)

    def emit(self, doc: dict[str, Any], *, bounded: bool = False) -> Record | dict[str, Any]:
        """A complete document (every ``Record`` field, in order) as a ``Record``, or as is without validation;
        integers beyond 64 bits are set aside first (``damage.bound_document``) unless the caller knows
        there are none (``bounded``: e.g. values a typed decoder already held to 64 bits)."""
        if not bounded:
            doc = bound_document(doc)
        return Record.model_validate(doc) if self.validate else doc

    def guard(self, line: int | None, raw: Any, build: Callable[..., Item], *args: Any) -> Item:
        """``build(*args)`` for one input item; any failure becomes a rejection naming file, line and cause."""
        try:
            return build(*args)
        except GUARDED as exc:
            return self.failure(line, raw, exc)

    def failure(self, line: int | None, raw: Any, exc: Exception) -> Rejection:
        """The rejection of an item whose build raised ``exc`` (one of ``GUARDED``): ``guard``'s verdict, for
        hot loops that inline the ``try``."""
        if isinstance(exc, InputError):
            return self.reject(line, str(exc), raw)
        if isinstance(exc, ValidationError):
            return self.reject(line, "invalid record: " + _validation_summary(exc), raw)
        return self.reject(line, f"unexpected shape: {type(exc).__name__}: {exc}", raw)


# What building one item may raise that makes it a rejection (InputError and ValidationError are ValueErrors).
GUARDED = (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError)


def _validation_summary(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{loc}: {err.get('msg')}")
    return "; ".join(parts)


def iter_json_lines(
    stream: IO[bytes], batch: Batch, fast_decode: Callable[[bytes], Any] | None = None
) -> Iterator[tuple[int, bytes, Any]]:
    """(line number, raw bytes, parsed JSON) per non-blank line; a line that is not JSON comes back with an
    ``InputError`` in place of the parsed value, for the caller to reject (streaming: one line in memory).

    ``fast_decode`` may parse a line first (returning None when it cannot); orjson parses the rest."""
    for number, raw in enumerate(stream, start=batch.context.first_line):
        if raw.isspace() or not raw:  # not raw.strip(): that copies every (~1 MB) page line
            continue
        if fast_decode is not None:
            value = fast_decode(raw)
            if value is not None:
                yield number, raw, value
                continue
        value = parse_json(raw)
        if isinstance(value, InputError):
            try:
                value = repair_json(raw)
            except ValueError:
                pass
            else:
                batch.flag_line(number, INVALID_UTF8)
        yield number, raw, value


def parse_json(raw: bytes) -> Any:
    """The parsed JSON of one line, or an ``InputError`` saying why it is not JSON (for the caller to reject)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return InputError(f"invalid JSON: {exc}")


def parse_instant(value: Any, field: str) -> datetime:
    """An aware UTC datetime from an ISO 8601 string with an offset (``Z`` included); naive is refused."""
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:
            return parsed if parsed.tzinfo is timezone.utc else parsed.astimezone(timezone.utc)
    raise InputError(f"field '{field}': not an ISO 8601 instant with a UTC offset: {value!r}"[:200])


def from_unix(value: Any, field: str) -> datetime:
    """A UTC datetime from seconds since the epoch (int, float or digit string)."""
    try:
        seconds = float(value)
        return datetime.fromtimestamp(seconds, timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError) as exc:
        raise InputError(f"field '{field}': not a unix time: {value!r}"[:200]) from exc


def as_id(value: Any, field: str) -> str:
    """A platform id as a string; ids must be non-negative integers or non-empty strings."""
    if isinstance(value, bool) or value is None:
        raise InputError(f"field '{field}': missing or not an id")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise InputError(f"field '{field}': not an id: {value!r}"[:200])


def opt_int(value: Any) -> int | None:
    """An optional counter: ints and digit strings pass, anything else is unknown (None)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def opt_str(value: Any) -> str | None:
    """An optional string field (anything else is unknown)."""
    return value if isinstance(value, str) and value else None


def as_dict(value: Any) -> dict[str, Any]:
    """A sub-object, or an empty one when absent or of the wrong type."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A list, or an empty one when absent or of the wrong type."""
    return value if isinstance(value, list) else []


# -- the envelope of REST answers ------------------------------------------------------------------------------
# The "_" of the raw line a collector writes when a post it stored is gone (X, Telegram): a tombstone to the
# normalizer
DELETED = "crawl_assets.deleted"


def wrap_line(body: bytes, **crawl: Any) -> bytes:
    """One raw lake line. The body's bytes are kept; only newlines, which in valid JSON can only be
    whitespace between tokens (inside strings they are escaped), become spaces so it fits on one line."""
    return b'{"crawl":' + orjson.dumps(crawl) + b',"response":' + body.replace(b"\r", b" ").replace(b"\n", b" ") + b"}"


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
