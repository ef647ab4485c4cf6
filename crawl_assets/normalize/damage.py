"""Damaged input that still holds a record: bytes that are not UTF-8, integers beyond 64 bits.

Neither may cost more than the one value it damages. Invalid UTF-8 is decoded with U+FFFD in place of
the bad bytes (``repair_json``, ``Utf8Repair``) and the record gets the provenance flag
``invalid_utf8_replaced``. An integer beyond the signed 64-bit range (which Parquet, Elasticsearch
``long`` and orjson cannot hold: one such counter used to fail a source's every later batch) is set
aside by ``bound_document``: a typed field (a counter, a media size) becomes null, a free-form metadata
value becomes its decimal string, the original digits are kept in ``metadata.out_of_range`` under the
field's path, and the record gets the flag ``value_out_of_range``.
"""

from __future__ import annotations

import ast
import codecs
import re
from typing import IO, Any

import orjson

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INVALID_UTF8 = "invalid_utf8_replaced"
OUT_OF_RANGE = "value_out_of_range"
REPLACEMENT = "\ufffd"


def with_flag(provenance: dict[str, Any], flag: str) -> dict[str, Any]:
    """A copy of ``provenance`` with ``flag`` added (provenance dicts may be shared by a page's records)."""
    flags = provenance.get("flags") or ()
    return provenance if flag in flags else {**provenance, "flags": [*flags, flag]}


def repair_json(raw: bytes) -> Any:
    """The JSON of a line that is not valid UTF-8, its bad bytes decoded as U+FFFD; raises ValueError
    (orjson's) when it is not JSON even then, or when the line was valid UTF-8 (nothing to repair)."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return orjson.loads(raw.decode("utf-8", "replace"))
    raise ValueError("valid UTF-8")


MAX_DEPTH = 64  # walks stop here: deeper values are left as they are (no real payload nests deeper)


def has_replacement(value: Any, depth: int = 0) -> bool:
    """Whether a parsed JSON value holds U+FFFD in any string (key or value)."""
    if type(value) is str:
        return REPLACEMENT in value
    if depth > MAX_DEPTH:
        return False
    if type(value) is dict:
        return any(REPLACEMENT in k or has_replacement(v, depth + 1) for k, v in value.items())
    if type(value) is list:
        return any(has_replacement(v, depth + 1) for v in value)
    return False


class Utf8Repair:
    """A binary reader that passes valid UTF-8 through untouched and replaces invalid bytes with U+FFFD
    (re-encoded), for streaming parsers that would otherwise stop at the first bad byte. ``replaced``
    counts the chunks that needed it (items parsed after the first one are checked for U+FFFD)."""

    def __init__(self, inner: IO[bytes]) -> None:
        self._inner = inner
        self._strict = codecs.getincrementaldecoder("utf-8")("strict")
        self._lenient = codecs.getincrementaldecoder("utf-8")("replace")
        self._reencode = False  # held-back bytes of a repaired chunk must come out re-encoded
        self.replaced = 0

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        data = self._inner.read(size)
        final = not data
        state = self._strict.getstate()
        try:
            text = self._strict.decode(data, final)
        except UnicodeDecodeError:
            self._lenient.setstate(state)
            text = self._lenient.decode(data, final)
            self._strict.setstate(self._lenient.getstate())
            self.replaced += 1
            self._reencode = True
            return text.encode("utf-8")
        if self._reencode:
            self._reencode = bool(self._strict.getstate()[0])
            return text.encode("utf-8")
        return data


def _bounded(value: Any, path: str, found: dict[str, str], depth: int = 0) -> Any:
    """``value`` with every integer beyond 64 bits as its decimal string (paths recorded in ``found``); the
    same object when there is none (the common case costs one type check per value, nothing is copied)."""
    kind = type(value)
    if kind is int:
        if INT64_MIN <= value <= INT64_MAX:
            return value
        found[path] = str(value)
        return found[path]
    if depth > MAX_DEPTH or (kind is not dict and kind is not list):
        return value
    changed: Any = None
    for key, item in value.items() if kind is dict else enumerate(value):
        item_kind = type(item)
        if item_kind is int:
            if INT64_MIN <= item <= INT64_MAX:
                continue
        elif item_kind is not dict and item_kind is not list:
            continue
        new = _bounded(item, f"{path}.{key}" if kind is dict else f"{path}[{key}]", found, depth + 1)
        if new is not item:
            if changed is None:
                changed = dict(value) if kind is dict else list(value)
            changed[key] = new
    return value if changed is None else changed


def bound_document(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` (a record document) with no integer beyond 64 bits; unchanged (the same object) when none."""
    found: dict[str, str] = {}
    metrics = doc["metrics"]
    for name, value in metrics.items():
        if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
            found[f"metrics.{name}"] = str(value)
    media = doc["media"]
    for i, item in enumerate(media):
        for name, value in item.items():
            if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
                found[f"media[{i}].{name}"] = str(value)
    metadata = _bounded(doc["metadata"], "metadata", found)
    if not found:
        return doc
    doc = dict(doc)
    doc["metrics"] = {k: None if f"metrics.{k}" in found else v for k, v in metrics.items()}
    doc["media"] = [{k: None if f"media[{i}].{k}" in found else v for k, v in item.items()}
                    for i, item in enumerate(media)]
    doc["metadata"] = {**metadata, "out_of_range": found}
    doc["provenance"] = with_flag(doc["provenance"], OUT_OF_RANGE)
    return doc


def parse_error_text(exc: BaseException) -> str:
    """A streaming parser's error as one line of human text (yajl reports some errors as a bytes repr)."""
    text = str(exc)
    if text[:2] in ("b'", 'b"'):
        try:
            text = ast.literal_eval(text).decode("utf-8", "replace")
        except (ValueError, SyntaxError):
            pass
    return " ".join(text.split("(right here)")[0].split())[:200]


_LONG_NUMBER = re.compile(rb"(?<![\w.\-\"])-?\d{19,}(?![\w.\"])")
_TRAILING_DIGITS = re.compile(rb"(?:-\d*|\d+)$")
_TRAILING_BACKSLASHES = re.compile(rb"\\+$")
_MAX_CARRY = 1 << 16


def _unescaped_quotes(data: bytes) -> int:
    """How many ``"`` in ``data`` are not escaped (preceded by an even run of backslashes), by counting
    quotes after runs of at least k backslashes for k = 0, 1, 2... (C-speed counts, no Python loop per byte)."""
    total, k, sign = 0, 0, 1
    while True:
        count = data.count(b"\\" * k + b'"')
        if not count:
            return total
        total += sign * count
        k, sign = k + 1, -sign


class BigIntQuote:
    """A binary reader of JSON text that turns integer literals beyond 64 bits into strings of their digits,
    which streaming parsers in C (yajl) reject with "integer overflow" (the rest of the file would be lost).
    Digits inside JSON strings are never touched (the reader knows whether each chunk starts in a string).
    ``quoted`` holds the digit strings it made, so the items holding them can be flagged."""

    def __init__(self, inner: IO[bytes]) -> None:
        self._inner = inner
        self._in_string = False
        self._carry = b""  # a number (or backslashes) the previous chunk ended in, completed by the next
        self.quoted: set[str] = set()

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        data = self._carry
        while True:
            more = self._inner.read(size)
            if not more:  # the end: nothing left to complete
                self._carry = b""
                return self._rewrite(data) if data else b""
            data += more
            tail = _TRAILING_DIGITS.search(data) or _TRAILING_BACKSLASHES.search(data)
            cut = tail.start() if tail else len(data)
            if cut or len(data) > _MAX_CARRY:  # something to hand out (a number is never this long)
                cut = cut or len(data)
                data, self._carry = data[:cut], data[cut:]
                return self._rewrite(data)

    def _rewrite(self, data: bytes) -> bytes:
        start_in_string = self._in_string
        quotes = _unescaped_quotes(data)
        self._in_string = start_in_string ^ bool(quotes % 2)
        if not _LONG_NUMBER.search(data):
            return data
        parts, last = [], 0
        for match in _LONG_NUMBER.finditer(data):
            inside = start_in_string ^ bool(_unescaped_quotes(data[: match.start()]) % 2)
            if inside or INT64_MIN <= int(match.group()) <= INT64_MAX:
                continue
            digits = match.group().decode()
            self.quoted.add(digits)
            parts += (data[last : match.start()], b'"', match.group(), b'"')
            last = match.end()
        return b"".join(parts) + data[last:] if parts else data


def holds_any(value: Any, strings: set[str], depth: int = 0) -> bool:
    """Whether a parsed JSON value holds one of ``strings`` as a string value."""
    if type(value) is str:
        return value in strings
    if depth > MAX_DEPTH:
        return False
    if type(value) is dict:
        return any(holds_any(v, strings, depth + 1) for v in value.values())
    if type(value) is list:
        return any(holds_any(v, strings, depth + 1) for v in value)
    return False
