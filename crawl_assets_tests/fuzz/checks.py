"""What every normalizer must do with any input: never raise, and give every item an outcome, a
rejection always carrying a reason and where it was."""

from __future__ import annotations

import codecs
import io
import json

import orjson

from crawl_assets.normalize import NormalizeContext, normalize_stream
from crawl_assets.normalize.damage import repair_json
from crawl_assets.schema import Record, Rejection
from crawl_assets.schema.record import SNIPPET_CHARS

CONTEXT = NormalizeContext(tenant="fuzz", source="fuzz.x.src", method="api", run_id="fuzz-run")
NAME = "fuzz-input"


def _line_of(item: Record | Rejection) -> int | None:
    return item.line if isinstance(item, Rejection) else item.provenance.raw_line


ONE_ITEM_PER_LINE = {"telegram"}


def _must_account(fmt: str, line: bytes) -> bool:
    """Lines that must yield at least one record or rejection: every line of a one-item-per-line format;
    for page formats (one API response per line) a broken line, and an x-v2 page holding posts (a valid
    page may hold no items at all)."""
    if fmt in ONE_ITEM_PER_LINE:
        return True
    try:
        page = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            page = repair_json(line)  # bytes that are not UTF-8 cost their characters, not the line
        except ValueError:
            return True
    if not isinstance(page, dict):
        return True
    return fmt == "x-v2" and bool(page.get("data"))


def check_normalizer(fmt: str, payload: bytes, *, line_based: bool) -> list[Record | Rejection]:
    """Run ``fmt`` on ``payload`` and assert the contract; returns the items."""
    items = list(normalize_stream(fmt, io.BytesIO(payload), name=NAME, context=CONTEXT))
    for item in items:
        assert isinstance(item, Record | Rejection), type(item)
        if isinstance(item, Rejection):
            assert item.reason.strip(), f"{fmt}: a rejection without a reason: {item!r}"
            assert item.name == NAME
            assert len(item.snippet) <= SNIPPET_CHARS + 20, "snippets stay bounded whatever the input size"
        else:
            assert item.provenance.source == CONTEXT.source and item.provenance.format == fmt
    whole_file = [i for i in items if isinstance(i, Rejection) and i.line is None]
    if line_based and not whole_file:  # a file refused whole (another format) accounts for all its lines
        seen = {_line_of(i) for i in items}
        for number, line in enumerate(payload.removeprefix(codecs.BOM_UTF8).split(b"\n"), start=1):
            if line.strip() and _must_account(fmt, line):
                assert number in seen, f"{fmt}: line {number} vanished without a record or a rejection"
    elif fmt != "play-csv" and not _valid_json(payload, lenient_space=fmt in YAJL_FORMATS):
        assert any(isinstance(i, Rejection) for i in items), f"{fmt}: a broken document gave no rejection"
    return items


# Formats read by ijson's yajl backend, whose lexer takes vertical tab and form feed for whitespace between
# tokens (found by bench/fuzz_full.py at 10,000 cases: '"type":\v"message"' read as the message it is; the same
# in an X archive's tweets.js, '"resize":\v"crop"'). Nothing is lost that way, so such a document counts as
# valid here; inside a string yajl still refuses them.
YAJL_FORMATS = frozenset({"telegram-export", "x-archive"})


def _valid_json(document: bytes, *, lenient_space: bool = False) -> bool:
    document = document.removeprefix(codecs.BOM_UTF8)  # a UTF-8 BOM is accepted by every format
    if lenient_space:
        document = document.replace(b"\x0b", b" ").replace(b"\x0c", b" ")
    body = document.partition(b"=")[2] if document.lstrip().startswith(b"window.") else document
    try:
        json.loads(body.decode("utf-8", "replace"))  # bytes that are not UTF-8 cost their characters only
    except (ValueError, RecursionError):
        return False
    return True
