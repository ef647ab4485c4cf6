"""Reads of files that someone else may have placed: a regular file only (a FIFO, device or socket is refused
before anything blocks on it), links followed only when the caller allows, never more than a stated size."""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

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

