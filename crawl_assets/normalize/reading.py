"""Reading one input file the same way everywhere (``crawl-assets normalize`` and ``normalized_records``), and
its format's normalizer over it (``normalize_stream``, ``normalize_documents``). The formats come from the source
specs (``crawl_assets.core.catalog``): each names the normalizer of every format it writes or imports.

``decode_input`` turns the bytes a user or the lake hands over into the content a normalizer reads:

- gzip is recognized by its magic bytes and decompressed, nested too (a ``.json.gz`` export is stored in
  the lake gzip-compressed once more);
- a UTF-8 byte order mark at the start is skipped (editors and Windows tools add one; UTF-16 marks are
  left to the formats that use UTF-16, such as Play Console CSV);
- a read that fails part-way (a truncated or corrupt gzip member, an I/O error) ends the content where
  it failed instead of raising: what was read stays read, and ``failure`` says why the rest is missing,
  so the caller reports it as a rejection naming the file, and the other files of a run go on.

A regular file stays the very stream object it was (only positioned after a BOM), so the parallel
normalizer can still read its chunks by offset.

Lines are bounded: a line-based input (one item or API page per line) never makes a reader hold a line
longer than its cap (``line_cap``: ``CRAWL_MAX_LINE_BYTES`` for export files and files given to the CLI, at
least ``LIVE_LINE_BYTES`` for a live sync's own raw lines). A longer line is read through in pieces without
being kept, stands as an empty line (later lines keep their numbers) and is reported as a ``LongLine``, which
the caller turns into a rejection with its reason (``line_blocks``, ``LineCapped``, ``capped_text_lines``).
"""

from __future__ import annotations

import codecs
import gzip
import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any, Protocol

from crawl_assets import settings
from crawl_assets.core import catalog
from crawl_assets.normalize.build import Document, Item, UnknownFormatError
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.sniff import mismatch
from crawl_assets.schema.record import Record, Rejection, snippet_of

GZIP_MAGIC = b"\x1f\x8b"
HEAD_BYTES = 4096
PIECE_BYTES = 32 << 10  # a failing read loses what it decompressed: read in pieces so little is lost
MAX_GZIP_LAYERS = 3
_READ_ERRORS = (OSError, EOFError, zlib.error, gzip.BadGzipFile, ValueError)
# A live sync's raw line: one API answer (at most 16 MiB, ``sdk.http.MAX_RESPONSE_BYTES``) in its envelope.
LIVE_LINE_BYTES = 17 << 20
LONG_LINE_HEAD = 2000  # bytes of an over-long line kept for its rejection's snippet


class Prefixed(io.RawIOBase):
    """A raw reader that serves ``head`` first, then the rest of ``rest`` (for streams that cannot seek)."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._head or self._rest.read(len(buffer))
        self._head = b""
        n = len(data)
        buffer[:n] = data
        return n


class _Guarded:
    """A binary reader whose read errors end the content instead of raising; the first error is kept."""

    def __init__(self, inner: IO[bytes], what: str) -> None:
        self._inner = inner
        self._what = what
        self.error: str | None = None
        self.newlines = 0  # complete lines handed out before a failure (to say where the content stopped)

    def _failed(self, exc: BaseException) -> bytes:
        if self.error is None:
            detail = " ".join(str(exc).split()) or type(exc).__name__
            self.error = f"{self._what}: {detail}"
        return b""

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (at most one piece per call; everything left for a negative size)."""
        if size < 0:
            return b"".join(iter(lambda: self.read(PIECE_BYTES), b""))
        if self.error is not None:
            return b""
        try:
            data = self._inner.read(min(size, PIECE_BYTES))
        except _READ_ERRORS as exc:
            return self._failed(exc)
        self.newlines += data.count(b"\n")
        return data

    def readline(self, size: int = -1) -> bytes:
        if self.error is not None:
            return b""
        try:
            line = self._inner.readline(size)
        except _READ_ERRORS as exc:
            return self._failed(exc)
        if line.endswith(b"\n"):
            self.newlines += 1
        return line

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line

    def readable(self) -> bool:
        return True


class Decoded:
    """The content of one input, and what went wrong reading it (``failure``, None when it read whole)."""

    def __init__(self, stream: IO[bytes], head: bytes, guards: list[_Guarded], compressed: bool) -> None:
        self.stream = stream
        self.head = head  # the content's first bytes (for recognizing its format)
        self.compressed = compressed
        self._guards = guards

    @property
    def failure(self) -> str | None:
        """Why the content ended early (the first read error), or None."""
        return next((g.error for g in self._guards if g.error is not None), None)

    @property
    def lines_read(self) -> int:
        """Complete lines of content read before a failure (the failure is on the line after them)."""
        return self._guards[-1].newlines if self._guards else 0


def _plain_file(stream: IO[bytes]) -> bool:
    """A file on disk or in memory: it can be rewound, and it is read as it is (offset reads stay possible)."""
    if isinstance(stream, io.BytesIO):
        return True
    return isinstance(stream, io.BufferedReader) and isinstance(stream.raw, io.FileIO) and stream.seekable()


def _with_head(source: IO[bytes]) -> tuple[bytes, IO[bytes]]:
    """The first bytes of a stream that cannot rewind, and a stream that still starts with them."""
    parts, size = [], 0
    while size < HEAD_BYTES:
        part = source.read(HEAD_BYTES - size)
        if not part:
            break
        parts.append(part)
        size += len(part)
    head = b"".join(parts)
    return head, io.BufferedReader(Prefixed(head, source), buffer_size=1 << 20)  # type: ignore[arg-type]


def decode_input(stream: IO[bytes]) -> Decoded:
    """The content of ``stream``: gzip layers removed, a UTF-8 BOM skipped, read errors turned into an end."""
    guards: list[_Guarded] = []
    current: IO[bytes]
    if _plain_file(stream):
        start = stream.tell()
        head = stream.read(HEAD_BYTES)
        stream.seek(start)
        current = stream
    else:
        guards.append(_Guarded(stream, "cannot read"))
        head, current = _with_head(guards[-1])  # type: ignore[arg-type]
    compressed = False
    while head[:2] == GZIP_MAGIC and len(guards) <= MAX_GZIP_LAYERS:
        compressed = True
        unzipped = gzip.GzipFile(fileobj=current, mode="rb")
        guards.append(_Guarded(unzipped, "truncated or corrupt gzip data"))  # type: ignore[arg-type]
        head, current = _with_head(guards[-1])  # type: ignore[arg-type]
    if head.startswith(codecs.BOM_UTF8):
        head = head[len(codecs.BOM_UTF8):]
        if current is stream:
            stream.seek(stream.tell() + len(codecs.BOM_UTF8))
        else:
            current.read(len(codecs.BOM_UTF8))
    return Decoded(current, head, guards, compressed)


def line_cap(method: str, configured: int | None = None) -> int:
    """The longest line a reader of a batch collected by ``method`` holds: ``configured`` (else the setting,
    ``CRAWL_MAX_LINE_BYTES``) for an export file; at least ``LIVE_LINE_BYTES`` for what a live sync wrote itself
    (its lines are answers the sync already bounded)."""
    cap = configured or settings.max_line_bytes()
    return cap if method == "export" else max(cap, LIVE_LINE_BYTES)


@dataclass(frozen=True)
class LongLine:
    """A line longer than the cap, skipped unread: its number, how many bytes it had, its first bytes."""

    line: int
    size: int
    head: bytes

    def reason(self, cap: int) -> str:
        return (f"line longer than {cap} bytes (at least {self.size}): skipped without being read "
                f"(CRAWL_MAX_LINE_BYTES sets the limit for export files)")


def line_blocks(stream: IO[bytes], read_bytes: int, cap: int) -> Iterator[tuple[int, int, bytes | LongLine]]:
    """(first line number, offset of the block in ``stream``, whole lines) for each read of ``read_bytes``, or
    (its number, its offset, ``LongLine``) for a line longer than ``cap``, in input order until the end.

    Memory stays under one read plus ``cap``: reads are at most ``cap`` bytes, so only the line a read starts
    in (carried over from earlier reads) can be over the cap, and it is dropped as soon as it is."""
    size = max(1, min(read_bytes, cap))
    first, offset = 1, 0
    carry: list[bytes] = []  # the line being read, while it is within the cap
    carried = 0
    skipping: LongLine | None = None  # the over-long line being read through
    while True:
        data = stream.read(size)
        if not data:
            if skipping is not None:
                yield first, offset, skipping
            elif carried:
                yield first, offset, b"".join(carry)
            return
        start = 0
        if skipping is not None:
            end = data.find(b"\n")
            if end < 0:
                skipping = LongLine(skipping.line, skipping.size + len(data), skipping.head)
                continue
            skipping = LongLine(skipping.line, skipping.size + end + 1, skipping.head)
            yield first, offset, skipping
            first, offset, start, skipping = first + 1, offset + skipping.size, end + 1, None
        end = data.find(b"\n", start)
        if end >= 0 and carried + end - start > cap:  # the carried line ends here, over the cap
            line = LongLine(first, carried + end - start + 1, b"".join([*carry, data[start:end]])[:LONG_LINE_HEAD])
            yield first, offset, line
            first, offset, start, carry, carried = first + 1, offset + line.size, end + 1, [], 0
        cut = data.rfind(b"\n", start) + 1
        if cut <= start:  # no line ends in this read
            carry.append(data[start:] if start else data)
            carried += len(data) - start
            if carried > cap:
                skipping = LongLine(first, carried, b"".join(carry)[:LONG_LINE_HEAD])
                carry, carried = [], 0
            continue
        blob = b"".join([*carry, memoryview(data)[start:cut]]) if carried or start else (data if cut == len(data) else data[:cut])
        yield first, offset, blob
        first += blob.count(b"\n")
        offset += len(blob)
        carry = [data[cut:]] if cut < len(data) else []
        carried = len(data) - cut


class LineCapped(io.RawIOBase):
    """A binary reader of ``inner`` whose lines are at most ``cap`` bytes: a longer line stands as an empty
    line and is listed in ``long_lines`` (numbered from ``first_line``), never held (``line_blocks``)."""

    def __init__(self, inner: IO[bytes], cap: int, first_line: int = 1) -> None:
        self._blocks = line_blocks(inner, 1 << 20, cap)
        self._out = memoryview(b"")
        self._first_line = first_line
        self.cap = cap
        self.long_lines: list[LongLine] = []

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._out:
            block = next(self._blocks, None)
            if block is None:
                return 0
            _, _, body = block
            if isinstance(body, LongLine):
                self.long_lines.append(LongLine(body.line + self._first_line - 1, body.size, body.head))
                body = b"\n"
            self._out = memoryview(body)
        n = min(len(buffer), len(self._out))
        buffer[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def take_long_lines(self) -> list[LongLine]:
        """The over-long lines met since the last call."""
        found, self.long_lines = self.long_lines, []
        return found


def capped_text_lines(text: IO[str], cap: int, long_lines: list[LongLine]) -> Iterator[str]:
    """The lines of a text stream (a CSV export), each at most ``cap`` characters: a longer one is read through
    in bounded pieces, comes out as an empty line and is appended to ``long_lines``."""
    number = 0
    while line := text.readline(cap + 1):
        number += 1
        if len(line) <= cap or line.endswith(("\n", "\r")):
            yield line
            continue
        head, size = line[:LONG_LINE_HEAD].encode("utf-8", "replace"), len(line)
        while (part := text.readline(cap)) and not part.endswith(("\n", "\r")):
            size += len(part)
        long_lines.append(LongLine(number, size + len(part), head))
        yield "\n"


# -- an input file through its format's normalizer --------------------------------------------------------------
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
