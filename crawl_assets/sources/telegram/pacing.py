"""Gentle use of an account: one run at a time per account, and a minimum gap between its requests.

Telegram bans accounts that hammer it, and the same session used from two connections at once can be
invalidated (``AUTH_KEY_DUPLICATED``). So a run takes an exclusive lock per account (a tenant's credential; ``crawl_assets.shared_lock``: an
advisory lock shared by every machine when the instance is on Postgres, else a file lock shared by every
process on the machine) and spaces its requests; the time of the last request is kept with the lock, so
the next holder keeps the spacing too.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from types import TracebackType

from crawl_assets.shared_lock import HeldLock, acquire
from crawl_assets.sources.telegram.errors import AccountBusy


class Pacer:
    """At most one request per ``interval`` seconds; the wait is counted for the run's metadata."""

    def __init__(self, interval: float, last: float = 0.0):
        self.interval = max(0.0, interval)
        self.last = last
        self.waited = 0.0

    async def wait(self) -> None:
        if self.interval:
            delay = self.last + self.interval - time.time()
            if delay > 0:
                self.waited += delay
                await asyncio.sleep(delay)
        self.last = time.time()


class AccountLock:
    """An exclusive, cross-process lock on one tenant's credential (None: the tenant's default), waited for
    at most ``wait_seconds``. Tenant names hold no ``--`` and credential names no ``-``, so file names are unique."""

    def __init__(self, directory: str | os.PathLike[str], tenant: str, credential: str | None,
                 wait_seconds: float = 60.0):
        self.path = Path(directory) / f"telegram-{tenant}--{credential or '_'}.lock"
        self.credential = f"{tenant}:{credential or ''}"
        self.wait_seconds = wait_seconds
        self._lock: HeldLock | None = None
        self.last_request = 0.0

    def __enter__(self) -> "AccountLock":
        lock = acquire(f"telegram-account:{self.credential}", self.path, self.wait_seconds, mode=0o600)
        if lock is None:
            raise AccountBusy(self.credential, max(30, int(self.wait_seconds)))
        self._lock = lock
        try:
            self.last_request = float(lock.read_note() or 0)
        except ValueError:
            self.last_request = 0.0
        return self

    def release(self, last_request: float) -> None:
        if self._lock is None:
            return
        lock, self._lock = self._lock, None
        try:  # the pacing note is best kept; the lock must be released whatever happens to it
            lock.write_note(f"{last_request:.3f}")
        finally:
            lock.release()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.release(self.last_request)
