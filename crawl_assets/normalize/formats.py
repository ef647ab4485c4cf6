"""The input formats ``crawl-assets normalize`` and the ``normalized_records`` asset understand.

Built from the source specs (``crawl_assets.core.catalog``): each spec names the normalizer of every
format it writes or imports, so a new source type brings its formats with it.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import IO, Protocol

from crawl_assets.normalize.build import Document, Item, UnknownFormatError
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.reading import Decoded, LineCapped, LongLine, decode_input, line_cap
from crawl_assets.normalize.sniff import mismatch
from crawl_assets.schema.record import Record, Rejection, snippet_of
from crawl_assets.core import catalog


class Normalizer(Protocol):
    """Reads one binary (already decompressed) stream; yields a record or a rejection per input item."""

    def __call__(
        self, stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True
    ) -> Iterator[Item]: ...


def get_normalizer(fmt: str) -> Normalizer:
    """The normalizer of ``fmt``; an unknown name raises ``UnknownFormatError`` listing the known ones."""
    known = catalog.catalog().formats()
    if fmt not in known:
        raise UnknownFormatError(f"unknown format {fmt!r} (known: {', '.join(sorted(known))})")
    return catalog.normalizer(fmt)


def normalize_stream(
    fmt: str, stream: IO[bytes], *, name: str, context: NormalizeContext
) -> Iterator[Record | Rejection]:
    """Validated records and rejections of one input file in format ``fmt``, streamed (constant memory).

    The file may be gzip-compressed and start with a UTF-8 BOM (``reading.decode_input``); a file that is
    clearly another format is one rejection saying which; a read that fails part-way keeps what was read
    and ends with a rejection giving the reason."""
    return normalize_input(fmt, stream, name=name, context=context, validate=True)  # type: ignore[return-value]


def normalize_documents(
    fmt: str, stream: IO[bytes], *, name: str, context: NormalizeContext
) -> Iterator[Document | Rejection]:
    """Like ``normalize_stream`` but yields record documents (dicts, Record field order) without pydantic
    validation: ~3x faster, for bulk paths that serialize straight to JSON (see ``build.Batch``)."""
    return normalize_input(fmt, stream, name=name, context=context, validate=False)  # type: ignore[return-value]


def normalize_input(
    fmt: str, stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True
) -> Iterator[Item]:
    """``normalize_stream``/``normalize_documents``: the decoded content of ``stream`` through ``fmt``."""
    normalizer = get_normalizer(fmt)
    decoded = decode_input(stream)
    refusal = opening_rejection(fmt, decoded, name, sniff=format_chosen_by_user(context))
    if refusal is not None:
        yield refusal
        return
    if not catalog.catalog().formats()[fmt].numbered_lines:  # whole documents (streamed) or CSV (capped itself)
        yield from normalizer(decoded.stream, name=name, context=context, validate=validate)
    else:  # one item or page per line: no line longer than the cap is ever held
        cap = line_cap(context.method, context.max_line_bytes)
        capped = LineCapped(decoded.stream, cap, context.first_line)
        for item in normalizer(io.BufferedReader(capped, buffer_size=1 << 20), name=name, context=context,
                               validate=validate):
            yield from long_line_rejections(capped.take_long_lines(), cap, name)
            yield item
        yield from long_line_rejections(capped.take_long_lines(), cap, name)
    ending = closing_rejection(fmt, decoded, name)
    if ending is not None:
        yield ending


def long_line_rejections(lines: list[LongLine], cap: int, name: str) -> Iterator[Rejection]:
    """A rejection for each line longer than ``cap`` (skipped unread), naming the file and line."""
    for line in lines:
        yield Rejection(name=name, line=line.line, reason=line.reason(cap), snippet=snippet_of(line.head))


def format_chosen_by_user(context: NormalizeContext) -> bool:
    """Whether a person named the input's format (an export file, the CLI), which may be wrong; a batch our own
    collector wrote is of the format it named, so no other format's signature is looked for."""
    return context.method == "export"


def opening_rejection(fmt: str, decoded: Decoded, name: str, *, sniff: bool = True) -> Rejection | None:
    """The rejection of a whole file that is unreadable or, when ``sniff``, clearly of another supported format,
    else None."""
    reason = mismatch(fmt, decoded.head) if sniff else None
    if reason is None and not decoded.head and decoded.failure:
        reason = f"{decoded.failure}: nothing could be read"
    return Rejection(name=name, line=None, reason=reason, snippet=snippet_of(decoded.head[:200])) if reason else None


def closing_rejection(fmt: str, decoded: Decoded, name: str) -> Rejection | None:
    """The rejection saying why a file's content ended early (truncated gzip, read error), else None."""
    failure = decoded.failure
    if failure is None:
        return None
    spec = catalog.catalog().formats().get(fmt)
    line = decoded.lines_read + 1 if spec is not None and spec.numbered_lines else None
    return Rejection(name=name, line=line, reason=f"{failure}; the rest of the file is skipped")
