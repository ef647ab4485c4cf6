"""The input formats ``crawl-assets normalize`` and the ``normalized_records`` asset understand.

Built from the source plugins (``crawl_assets.sources.catalog``): each plugin names the normalizer of
every format it writes or imports, so a new source type brings its formats with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Protocol

from crawl_assets.normalize.build import Document, Item, UnknownFormatError
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.schema.record import Record, Rejection
from crawl_assets.sources.catalog import format_specs
from crawl_assets.sources.plugin import resolve


class Normalizer(Protocol):
    """Reads one binary (already decompressed) stream; yields a record or a rejection per input item."""

    def __call__(
        self, stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True
    ) -> Iterator[Item]: ...


FORMATS: dict[str, Normalizer] = {fmt: resolve(spec) for fmt, spec in format_specs().items()}


def get_normalizer(fmt: str) -> Normalizer:
    """The normalizer of ``fmt``; an unknown name raises ``UnknownFormatError`` listing the known ones."""
    try:
        return FORMATS[fmt]
    except KeyError:
        raise UnknownFormatError(f"unknown format {fmt!r} (known: {', '.join(sorted(FORMATS))})") from None


def normalize_stream(
    fmt: str, stream: IO[bytes], *, name: str, context: NormalizeContext
) -> Iterator[Record | Rejection]:
    """Validated records and rejections of one input stream in format ``fmt``, streamed (constant memory)."""
    return get_normalizer(fmt)(stream, name=name, context=context)  # type: ignore[return-value]


def normalize_documents(
    fmt: str, stream: IO[bytes], *, name: str, context: NormalizeContext
) -> Iterator[Document | Rejection]:
    """Like ``normalize_stream`` but yields record documents (dicts, Record field order) without pydantic
    validation: ~3x faster, for bulk paths that serialize straight to JSON (see ``build.Batch``)."""
    return get_normalizer(fmt)(stream, name=name, context=context, validate=False)  # type: ignore[return-value]
