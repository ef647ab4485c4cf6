"""Exclusive ``flock`` lock files: under the named locks of ``shared`` (per source, Telegram account, enrich
tenant) on SQLite, and around a registry file's write (``exclusive``).

``flock`` rather than a pid file: the kernel drops the lock when its holder dies, so a SIGKILLed run
never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from crawl_assets.core.private import FILE_MODE, make_dirs


def open_locked(path: Path, wait_seconds: float, poll_seconds: float = 0.2, mode: int = FILE_MODE) -> int | None:
    """The descriptor of ``path`` locked exclusively, or None when another holder kept it ``wait_seconds``."""
    make_dirs(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, mode)
    deadline = time.monotonic() + wait_seconds
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return None
                time.sleep(poll_seconds)
    except BaseException:  # e.g. an interrupt while waiting: do not leak the descriptor
        os.close(fd)
        raise


def unlock(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def exclusive(path: Path, mode: int = FILE_MODE) -> Iterator[None]:
    """Hold ``path`` locked exclusively, waiting as long as another holder keeps it."""
    make_dirs(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, mode)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the lock
