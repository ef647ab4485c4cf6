"""One sync of a source at a time, whatever launched it: an exclusive lock file per source.

Dagster's run tag limit (dagster.yaml) keeps two single-source runs apart, but batch runs and
single-run range backfills carry no per-partition tag; this lock covers them all. It is an ``flock``
on ``$DAGSTER_HOME/locks/sources/<key>.lock``: the kernel drops it when the holder dies (a SIGKILLed
run worker never leaves a stale lock), and it is re-entrant inside one process (a batch holds it
around all steps of a source, and the raw step inside takes it again).
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from crawl_assets import settings

_held: dict[str, tuple[int, int]] = {}  # key -> (fd, depth) held by this process
_guard = threading.Lock()


class SourceBusy(RuntimeError):
    """Another process is syncing this source."""


def lock_dir() -> Path:
    return settings.dagster_home() / "locks" / "sources"


@contextmanager
def source_lock(key: str, wait_seconds: float = 0.0, poll_seconds: float = 0.2) -> Iterator[None]:
    """Hold the lock of source ``key``; wait up to ``wait_seconds`` for another holder, then ``SourceBusy``."""
    with _guard:
        if key in _held:
            fd, depth = _held[key]
            _held[key] = (fd, depth + 1)
            acquired = None
        else:
            acquired = False
    if acquired is None:
        try:
            yield
        finally:
            with _guard:
                fd, depth = _held[key]
                _held[key] = (fd, depth - 1)
        return
    path = lock_dir()
    path.mkdir(parents=True, exist_ok=True)
    fd = os.open(path / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise SourceBusy(f"source {key!r} is being synced by another run") from None
            time.sleep(poll_seconds)
    with _guard:
        _held[key] = (fd, 1)
    try:
        yield
    finally:
        with _guard:
            _, depth = _held.pop(key)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
