"""One sync of a source at a time, whatever launched it and on whichever machine: an exclusive lock per source.

Dagster's run tag limit (dagster.yaml) keeps two single-source runs apart, but batch runs and
single-run range backfills carry no per-partition tag; this lock covers them all. With the instance on
Postgres it is an advisory lock in the instance's database (runs on several machines exclude each other);
on SQLite an ``flock`` on ``$DAGSTER_HOME/locks/sources/<key>.lock`` (``crawl_assets.locks.shared``). Either
is dropped when its holder dies (a SIGKILLed run worker never leaves a stale lock), and it is re-entrant
inside one process (a batch holds it around all steps of a source, and the raw step inside takes it again).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from crawl_assets import settings
from crawl_assets.locks.shared import HeldLock, acquire

_held: dict[str, tuple[HeldLock, int]] = {}  # key -> (lock, depth) held by this process
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
            held, depth = _held[key]
            _held[key] = (held, depth + 1)
            acquired = None
        else:
            acquired = False
    if acquired is None:
        try:
            yield
        finally:
            with _guard:
                held, depth = _held[key]
                _held[key] = (held, depth - 1)
        return
    lock = acquire(f"source:{key}", lock_dir() / f"{key}.lock", wait_seconds, poll_seconds)
    if lock is None:
        raise SourceBusy(f"source {key!r} is being synced by another run")
    with _guard:
        _held[key] = (lock, 1)
    try:
        yield
    finally:
        with _guard:
            _held.pop(key)
        lock.release()
