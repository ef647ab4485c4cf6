"""The input formats ``crawl-assets normalize`` and the ``normalized_records`` asset understand."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Protocol

from crawl_assets.normalize.build import Item, UnknownFormatError
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.sources.telegram.normalize import normalize_export, normalize_telethon
from crawl_assets.sources.x.normalize import normalize_archive, normalize_v2


class Normalizer(Protocol):
    """Reads one binary (already decompressed) stream; yields a record or a rejection per input item."""

    def __call__(self, stream: IO[bytes], *, name: str, context: NormalizeContext) -> Iterator[Item]: ...


FORMATS: dict[str, Normalizer] = {
    "telegram": normalize_telethon,
    "telegram-export": normalize_export,
    "x-v2": normalize_v2,
    "x-archive": normalize_archive,
}


def get_normalizer(fmt: str) -> Normalizer:
    """The normalizer of ``fmt``; an unknown name raises ``UnknownFormatError`` listing the known ones."""
    try:
        return FORMATS[fmt]
    except KeyError:
        raise UnknownFormatError(f"unknown format {fmt!r} (known: {', '.join(sorted(FORMATS))})") from None


def normalize_stream(fmt: str, stream: IO[bytes], *, name: str, context: NormalizeContext) -> Iterator[Item]:
    """Records and rejections of one input stream in format ``fmt``, streamed (constant memory)."""
    return get_normalizer(fmt)(stream, name=name, context=context)
