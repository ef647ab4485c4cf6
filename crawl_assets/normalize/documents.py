"""Reading whole-document formats (Telegram Desktop ``result.json``, X archive data files) item by item
with a streaming parser, so that damage inside one item costs that item's damaged values only.

``DocumentReader`` sits between the file and ijson: bytes that are not UTF-8 become U+FFFD (ijson would
stop at the first one), integers beyond 64 bits become strings of their digits (ijson's C parser stops
with "integer overflow"); ``flag`` gives the items that held either the matching provenance flag.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

import ijson

from crawl_assets.normalize.build import Batch
from crawl_assets.normalize.damage import (
    INVALID_UTF8, OUT_OF_RANGE, BigIntQuote, Utf8Repair, has_replacement, holds_any,
)  # fmt: skip


class DocumentReader:
    """A binary reader of a JSON document with invalid UTF-8 replaced and huge integers quoted."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._repair = Utf8Repair(stream)
        self._quote = BigIntQuote(self._repair)

    def read(self, size: int = -1) -> bytes:
        return self._quote.read(size)

    def flag(self, batch: Batch, ordinal: int, item: Any) -> None:
        """Flag item ``ordinal``'s records when the item holds replaced bytes or a quoted huge integer."""
        if self._repair.replaced and has_replacement(item):
            batch.flag_line(ordinal, INVALID_UTF8)
        if self._quote.quoted and holds_any(item, self._quote.quoted):
            batch.flag_line(ordinal, OUT_OF_RANGE)


def ijson_items(stream: IO[bytes], prefix: str) -> tuple[DocumentReader, Iterator[Any]]:
    """The items at ``prefix`` of a document, read through a ``DocumentReader`` (floats as floats)."""
    reader = DocumentReader(stream)
    return reader, ijson.items(reader, prefix, use_float=True)


def document_items(batch: Batch, items: tuple[DocumentReader, Iterator[Any]]) -> Iterator[tuple[int, Any]]:
    """(ordinal, item) from 1, each item's records flagged for the damage it held."""
    reader, iterator = items
    for ordinal, item in enumerate(iterator, start=1):
        reader.flag(batch, ordinal, item)
        yield ordinal, item
