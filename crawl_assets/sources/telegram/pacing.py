"""Gentle use of an account: one run at a time per account, and a pace set by the account's own flood waits.

Telegram bans accounts that hammer it, and the same session used from two connections at once can be
invalidated (``AUTH_KEY_DUPLICATED``). So a run takes an exclusive lock per account (a tenant's credential;
``crawl_assets.locks.shared``: an advisory lock shared by every machine when the instance is on Postgres, else a
file lock shared by every process on the machine) and spaces its requests by the account's ``Pace``: the
configured interval, multiplied after each ``FLOOD_WAIT`` and drifting back towards the configured one slowly
(a half-life), under an optional cap of requests per hour. The pace, its flood history and the time of the
last request are kept with the lock (its note), so the next run, whichever source it syncs, goes on from them.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from crawl_assets.locks.shared import HeldLock, acquire
from crawl_assets.sources.telegram.errors import AccountBusy, LongFloodWait

SERIES_POINTS = 120  # samples of the pace kept for a run's metadata (evenly thinned as the run goes on)


@dataclass(frozen=True)
class Clock:
    """What pacing and waits use: real time, unless a simulation brings its own."""

    now: Callable[[], float] = time.time
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep


@dataclass(frozen=True)
class PaceSettings:
    """How an account's pace follows its flood waits (``TelegramResource`` fields; docs/sources/telegram.md)."""

    interval: float = 1.0  # seconds between two requests with no flood wait in its history
    flood_backoff: float = 2.0  # the interval is multiplied by this after each FLOOD_WAIT
    max_interval: float = 60.0
    recovery_half_life: float = 3600.0  # the extra spacing halves every this many seconds without a flood wait
    requests_per_hour: int = 0  # at most this many requests per account and clock hour (0: no cap)
    long_wait: float = 60.0  # a wait longer than this ends the run (``LongFloodWait``) instead of being slept


@dataclass
class PaceNote:
    """What the lock keeps for the account's next run (at most 256 bytes as JSON)."""

    last: float = 0.0  # time of the last request
    interval: float = 0.0  # the pace at ``at`` (0: the configured interval)
    at: float = 0.0
    floods: int = 0  # flood waits in the account's history
    rest_until: float = 0.0  # a long flood wait: nothing is sent before this
    hour: float = 0.0  # start of the hour ``sent`` counts
    sent: int = 0

    @classmethod
    def parse(cls, text: str) -> "PaceNote":
        """The note as written by ``dump``; a bare number (an earlier version's last request) or noise is read
        as much as it can be."""
        text = (text or "").strip()
        try:
            data = json.loads(text) if text else {}
        except ValueError:
            return cls()
        if isinstance(data, (int, float)):
            return cls(last=float(data))
        if not isinstance(data, dict):
            return cls()
        known = {k: float(v) if k != "floods" and k != "sent" else int(v) for k, v in data.items()
                 if k in cls.__dataclass_fields__ and isinstance(v, (int, float)) and math.isfinite(v)}
        return cls(**known)

    def dump(self) -> str:
        return json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in asdict(self).items() if v},
                          separators=(",", ":"))


@dataclass
class Pace:
    """The account's pace during one run: waits before each request, learns from each flood wait, and keeps
    what the run's metadata plots (``summary``)."""

    settings: PaceSettings = field(default_factory=PaceSettings)
    note: PaceNote = field(default_factory=PaceNote)
    clock: Clock = field(default_factory=Clock)
    waited: float = 0.0  # spacing waits of this run
    flood_waits: int = 0  # flood waits of this run
    flood_seconds: float = 0.0
    requests: int = 0
    series: list[list[float]] = field(default_factory=list)  # [request number, interval, flood wait]
    _every: int = 1

    @property
    def last(self) -> float:
        return self.note.last

    def interval(self) -> float:
        """The spacing now: the interval after the last flood wait, its excess over the configured one halved
        for every ``recovery_half_life`` since."""
        base, s = self.settings.interval, self.settings
        if self.note.interval <= base:
            return base
        elapsed = max(0.0, self.clock.now() - self.note.at)
        excess = (self.note.interval - base) * 0.5 ** (elapsed / s.recovery_half_life if s.recovery_half_life else math.inf)
        return base + excess

    async def wait(self) -> None:
        """Wait until the account may send its next request: its pace, a flood wait it still rests from, its
        hour's cap. ``LongFloodWait`` when that is longer than a run should wait (``long_wait``)."""
        now = self.clock.now()
        interval = self.interval()
        ready = self.note.last + interval
        if self.note.rest_until > now:
            ready = max(ready, self._bearable(self.note.rest_until, now, "the account rests from a flood wait"))
        cap = self.settings.requests_per_hour
        if cap and now - self.note.hour >= 3600:
            self.note.hour, self.note.sent = now - (now % 3600), 0
        if cap and self.note.sent >= cap:
            ready = max(ready, self._bearable(self.note.hour + 3600, now, "the account's hourly request budget is spent"))
        if ready > now:
            self.waited += ready - now
            await self.clock.sleep(ready - now)
        self.note.last = self.clock.now()
        if cap and self.note.last - self.note.hour >= 3600:
            self.note.hour, self.note.sent = self.note.last - (self.note.last % 3600), 0
        self.note.sent += 1
        self.requests += 1
        self._sample(interval, 0.0)

    def _bearable(self, until: float, now: float, what: str) -> float:
        if until - now > self.settings.long_wait:
            seconds = math.ceil(until - now)
            raise LongFloodWait(seconds, "the next request", f"{what}: {seconds}s to go")
        return until

    def check(self) -> None:
        """``LongFloodWait`` before anything is sent when the account still rests from a long flood wait."""
        now = self.clock.now()
        if self.note.rest_until > now:
            self._bearable(self.note.rest_until, now, "the account rests from a flood wait")

    def flooded(self, seconds: float) -> None:
        """Telegram asked to wait ``seconds``: slow down, and rest that long whatever the source."""
        now = self.clock.now()
        s = self.settings
        if s.flood_backoff > 1:
            self.note.interval = min(s.max_interval, max(self.interval(), s.interval, 0.05) * s.flood_backoff)
            self.note.at = now
        self.note.floods += 1
        self.note.rest_until = max(self.note.rest_until, now + seconds)
        self.flood_waits += 1
        self.flood_seconds += seconds
        self._sample(self.note.interval, seconds)

    def _sample(self, interval: float, flood: float) -> None:
        if flood or self.requests % self._every == 0:
            self.series.append([self.requests, round(interval, 3), round(flood, 3)])
        if len(self.series) > SERIES_POINTS:  # keep every other point (flood waits are always kept)
            self.series = [p for i, p in enumerate(self.series) if i % 2 == 0 or p[2]]
            self._every *= 2

    def summary(self) -> dict[str, Any]:
        """The run's pacing figures, numbers that plot across runs, and the pace through the run."""
        return {"pace_interval_seconds": round(self.interval(), 3), "pacing_wait_seconds": round(self.waited, 3),
                "flood_waits": self.flood_waits, "account_flood_waits": self.note.floods,
                "requests_this_hour": self.note.sent, "pace_series": self.series}


class AccountLock:
    """An exclusive, cross-process lock on one tenant's credential (None: the tenant's default), waited for
    at most ``wait_seconds``. Tenant names hold no ``--`` and credential names no ``-``, so file names are unique."""

    def __init__(self, directory: str | os.PathLike[str], tenant: str, credential: str | None,
                 wait_seconds: float = 60.0):
        self.path = Path(directory) / f"telegram-{tenant}--{credential or '_'}.lock"
        self.credential = f"{tenant}:{credential or ''}"
        self.name = credential
        self.wait_seconds = wait_seconds
        self._lock: HeldLock | None = None
        self.note = PaceNote()

    def __enter__(self) -> "AccountLock":
        lock = acquire(f"telegram-account:{self.credential}", self.path, self.wait_seconds, mode=0o600)
        if lock is None:
            raise AccountBusy(self.credential, max(30, int(self.wait_seconds)))
        self._lock = lock
        self.note = PaceNote.parse(lock.read_note())
        return self

    @property
    def last_request(self) -> float:
        return self.note.last

    @last_request.setter
    def last_request(self, value: float) -> None:
        self.note.last = value

    def release(self) -> None:
        if self._lock is None:
            return
        lock, self._lock = self._lock, None
        try:  # the pacing note is best kept; the lock must be released whatever happens to it
            lock.write_note(self.note.dump())
        finally:
            lock.release()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.release()
