"""Reads of files that someone else may have placed: a regular file only (a FIFO, device or socket is refused
before anything blocks on it), links followed only when the caller allows, never more than a stated size."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import IO, Any, BinaryIO

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class FileRefused(ValueError):
    """The path is not a regular file, or is larger than allowed; the message says which (not the path: the
    caller names the file in its own words)."""


def open_regular(path: str | os.PathLike[str], *, follow_links: bool = False) -> BinaryIO:
    """``path`` opened for reading when it is a regular file (``OSError`` when it cannot be opened, including a
    link when ``follow_links`` is false; ``FileRefused`` when it is no regular file)."""
    fd = os.open(path, _FLAGS | (0 if follow_links else os.O_NOFOLLOW))
    fh = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        fh.close()
        raise FileRefused("not a regular file")
    return fh


def read_regular(path: str | os.PathLike[str], limit: int, *, follow_links: bool = False) -> bytes:
    """The bytes of the regular file at ``path``; ``FileRefused`` when it holds more than ``limit``."""
    with open_regular(path, follow_links=follow_links) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"larger than {limit} bytes")
    return data



def bounded_lines(fh: IO[bytes], cap: int, digest: Any = None) -> Iterator[tuple[int, bytes | None]]:
    """(line number, the line, or None when longer than ``cap``) of a binary file, never holding more than
    ``cap`` bytes of a line; every byte read goes to ``digest`` (a hashlib object) when given."""
    number = 0
    while line := fh.readline(cap + 1):
        number += 1
        if digest is not None:
            digest.update(line)
        if len(line) > cap and not line.endswith(b"\n"):
            while rest := fh.readline(cap + 1):  # the rest, read in bounded pieces, never held
                if digest is not None:
                    digest.update(rest)
                if rest.endswith(b"\n"):
                    break
            yield number, None
        else:
            yield number, line
