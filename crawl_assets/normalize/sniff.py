"""Which supported format a file looks like, from its first bytes (after decompression and a BOM).

Used to say "this is a Telegram Desktop export, use --format telegram-export" instead of one cryptic
rejection per line when a file is normalized with the wrong format. Only unmistakable signatures count:
when the head fits the requested format, or nothing clearly, the file is read as asked. Each format's
signature is declared by its source type (``FormatSpec.sniff``, or ``envelope_field`` for the crawl
envelopes of REST answers, ``crawl_assets.normalize.build``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

import orjson

from crawl_assets.core import catalog
from crawl_assets.core.catalog import FormatSpec, resolve

_ENVELOPE = re.compile(rb'^\{\s*"crawl"\s*:\s*\{([^{}]*)\}')


def first_line(head: bytes) -> dict[str, Any] | None:
    """The head's first line as a JSON object, when the head holds it whole and it is one."""
    text = head.lstrip()
    if not text.startswith(b"{"):
        return None
    first, newline, _ = text.partition(b"\n")
    line = parse(first) if newline else None
    return line if isinstance(line, dict) else None


def parse(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def envelope_fields(head: bytes, line: dict[str, Any] | None) -> set[str]:
    """The fields of the crawl envelope the head starts with (empty when it does not start with one)."""
    if line is not None:
        crawl = line.get("crawl")
        return set(crawl) if isinstance(crawl, dict) and "response" in line else set()
    envelope = _ENVELOPE.match(head.lstrip())
    crawl = parse(b"{" + envelope.group(1) + b"}") if envelope else None
    return set(crawl) if isinstance(crawl, dict) else set()


@cache
def _sniffer(target: str) -> Callable[[bytes, dict[str, Any] | None], bool]:
    return resolve(target)


def _recognises(fmt: FormatSpec, head: bytes, line: dict[str, Any] | None) -> bool:
    if fmt.envelope_field:
        return fmt.envelope_field in envelope_fields(head, line)
    return bool(fmt.sniff) and _sniffer(fmt.sniff)(head, line)


def guess_format(head: bytes) -> str | None:
    """The format ``head`` (a file's first bytes) unmistakably belongs to, or None when unsure."""
    line = first_line(head)
    found = [f for f in catalog.catalog().formats().values() if _recognises(f, head, line)]
    return min(found, key=lambda f: f.sniff_rank).name if found else None


def mismatch(fmt: str, head: bytes) -> str | None:
    """The reason to refuse reading a file as ``fmt`` when it clearly is another supported format, else None."""
    guess = guess_format(head)
    if guess is None or guess == fmt:
        return None
    description = catalog.catalog().formats()[guess].description
    return (f"this looks like {description}, not {fmt}: use --format {guess} (crawl-assets normalize) "
            f"or --option format={guess} (crawl-assets sources add)")
