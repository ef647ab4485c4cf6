"""Reading one input file the same way everywhere (``crawl-assets normalize`` and ``normalized_records``).

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
"""

from __future__ import annotations

import codecs
import gzip
import io
import zlib
from collections.abc import Iterator
from typing import IO, Any

GZIP_MAGIC = b"\x1f\x8b"
HEAD_BYTES = 4096
PIECE_BYTES = 32 << 10  # a failing read loses what it decompressed: read in pieces so little is lost
MAX_GZIP_LAYERS = 3
_READ_ERRORS = (OSError, EOFError, zlib.error, gzip.BadGzipFile, ValueError)


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
