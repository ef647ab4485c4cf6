"""Normalize a line-based input on several processes, keeping input order and line numbers.

Line formats (``x-v2``, ``telegram``) hold one self-contained item per line, so a file splits into chunks
of whole lines that worker processes normalize independently (each chunk knows its first line number, so
rejections and ``provenance.raw_line`` stay exact). Results come back in input order: the output is the
same as with one process. At most ``2 * jobs`` chunks are in flight, so memory stays bounded whatever the
input size. Workers return serialized output (``encode_document``), which is cheap to send back.
"""

from __future__ import annotations

import dataclasses
import io
import multiprocessing
from collections import deque
from collections.abc import Iterator
from typing import IO, Any

from crawl_assets.normalize.build import Item
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.output import encode_document, rank_of
from crawl_assets.schema.record import Rejection

LINE_FORMATS = frozenset({"x-v2", "telegram"})
CHUNK_BYTES = 4 << 20

# (key, edit time, collection time, encoded record + edges) for a record; the rejection otherwise.
Encoded = tuple[str, float, float, bytes] | Rejection


def encode_items(items: Iterator[Item]) -> Iterator[Encoded]:
    """Serialize the documents of ``normalize_documents``-style output; rejections pass through."""
    for item in items:
        if isinstance(item, Rejection):
            yield item
        else:
            edited, collected = rank_of(item)  # type: ignore[arg-type]
            yield item["key"], edited, collected, encode_document(item)  # type: ignore[index]


def _work(task: tuple[str, str, NormalizeContext, int, bytes]) -> list[Encoded]:
    from crawl_assets.normalize.formats import get_normalizer

    fmt, name, context, first_line, blob = task
    chunk_context = dataclasses.replace(context, first_line=first_line)
    items = get_normalizer(fmt)(io.BytesIO(blob), name=name, context=chunk_context, validate=False)
    return list(encode_items(items))


def _chunks(stream: IO[bytes], chunk_bytes: int) -> Iterator[tuple[int, bytes]]:
    first = 1
    while True:
        lines = stream.readlines(chunk_bytes)
        if not lines:
            return
        yield first, b"".join(lines)
        first += len(lines)


def normalize_encoded(
    fmt: str, stream: IO[bytes], *, name: str, context: NormalizeContext, jobs: int = 1,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[Encoded]:  # fmt: skip
    """Encoded records and rejections of one stream, on ``jobs`` processes for line formats."""
    if jobs <= 1 or fmt not in LINE_FORMATS:
        from crawl_assets.normalize.formats import get_normalizer

        yield from encode_items(get_normalizer(fmt)(stream, name=name, context=context, validate=False))
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with multiprocessing.get_context(method).Pool(jobs) as pool:
        pending: deque[Any] = deque()
        for first, blob in _chunks(stream, chunk_bytes):
            pending.append(pool.apply_async(_work, ((fmt, name, context, first, blob),)))
            while len(pending) >= 2 * jobs:
                yield from pending.popleft().get()
        while pending:
            yield from pending.popleft().get()
