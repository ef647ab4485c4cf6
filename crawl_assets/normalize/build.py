"""Shared steps of every format's normalizer: reading lines, rejections, provenance, finishing a record.

Each format module only maps its own fields; everything that must behave the same for every source
(line numbering, what a rejection holds, how ``text_clean``/``lang`` are filled, validation) lives here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import IO, Any

import orjson
from pydantic import ValidationError

from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.lang import detect_lang
from crawl_assets.normalize.text import clean_text
from crawl_assets.schema.record import Provenance, Record, Rejection, snippet_of

Item = Record | Rejection
SERVICE_MESSAGE = "service message"


class InputError(ValueError):
    """Bad input in one item; the message names the field (the item is rejected, the stream goes on)."""


class UnknownFormatError(ValueError):
    """The requested input format has no normalizer."""


class Batch:
    """Per-stream state: the file name for messages and the provenance shared by its records."""

    def __init__(self, fmt: str, name: str, context: NormalizeContext) -> None:
        self.fmt = fmt
        self.name = name
        self.context = context
        self._base = Provenance(
            collected_at=context.collected_at,
            method=context.method,
            source=context.source,
            format=fmt,
            run_id=context.run_id,
            raw_pointer=context.raw_pointer,
        )

    def provenance(self, line: int, collected_at: datetime | None = None) -> Provenance:
        """The batch provenance pointing at one line; a per-item collection time fills a missing one."""
        update: dict[str, Any] = {"raw_line": line}
        if collected_at is not None and self._base.collected_at is None:
            update["collected_at"] = collected_at
        return self._base.model_copy(update=update)

    def reject(self, line: int | None, reason: str, raw: bytes | str | Any = b"", *, error: bool = True) -> Rejection:
        """A rejection naming this file and line, with the start of the raw item."""
        if not isinstance(raw, (bytes, str)):
            try:
                raw = orjson.dumps(raw, default=str)
            except (TypeError, orjson.JSONEncodeError):
                raw = repr(raw)
        return Rejection(name=self.name, line=line, reason=reason, snippet=snippet_of(raw), error=error)

    def finish(self, fields: dict[str, Any]) -> Record:
        """Fill ``text_clean`` and a missing ``lang`` from the observed text, then validate the record."""
        text = fields.get("text") or ""
        fields["text_clean"] = clean_text(text)
        if fields.get("lang") is None:
            fields["lang"] = detect_lang(text)
        fields["tenant"] = self.context.tenant
        fields["source"] = self.context.source
        return Record.model_validate(fields)

    def guarded(self, line: int | None, raw: Any, build: Callable[[], Iterator[Item]]) -> Iterator[Item]:
        """Run one item's normalization; any failure becomes a rejection naming file, line and cause."""
        try:
            yield from build()
        except InputError as exc:
            yield self.reject(line, str(exc), raw)
        except ValidationError as exc:
            yield self.reject(line, "invalid record: " + _validation_summary(exc), raw)
        except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError) as exc:
            yield self.reject(line, f"unexpected shape: {type(exc).__name__}: {exc}", raw)


def _validation_summary(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{loc}: {err.get('msg')}")
    return "; ".join(parts)


def iter_json_lines(stream: IO[bytes], batch: Batch) -> Iterator[tuple[int, bytes, Any]]:
    """(line number, raw bytes, parsed JSON) per non-blank line; a line that is not JSON comes back with an
    ``InputError`` in place of the parsed value, for the caller to reject (streaming: one line in memory)."""
    for number, raw in enumerate(stream, start=1):
        if not raw.strip():
            continue
        try:
            yield number, raw, orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            yield number, raw, InputError(f"invalid JSON: {exc}")


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
