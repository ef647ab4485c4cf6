"""What every request of the API reads from its app: the clients, the key store, the limits and slots, the
cursor secret (``ApiState``, ``app.state.api``). Routes import it from here; ``app.py`` builds it.

The limits it holds: per key, a token bucket of requests per minute (``RateLimiter``) and a cap on concurrent
streamed exports (``StreamSlots``); the same bucket counts each client address's failed logins.

The bucket holds ``burst`` tokens (a sixth of the per-minute rate, at least 5) and refills continuously;
a request takes one token or is refused with the seconds until the next one (``Retry-After``). State is
per process: with ``--workers N`` each worker grants the rate, so a key gets at most ``N`` times it. At most
``MAX_BUCKETS`` buckets are kept: past it, the idle ones go (full again by then), then the oldest.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from elasticsearch import AsyncElasticsearch, Elasticsearch

from crawl_assets.api import pages
from crawl_assets.api.keys import KeyStore
from crawl_assets.lake import Lake


MAX_BUCKETS = 100_000
IDLE_SECONDS = 300.0  # a bucket unused this long is full again at any rate of at least 1 a minute

@dataclass
class _Bucket:
    tokens: float
    stamp: float


@dataclass
class RateLimiter:
    default_per_minute: int = 600
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @staticmethod
    def burst(per_minute: int) -> float:
        return max(5.0, per_minute / 6)

    def take(self, key_id: str, per_minute: int | None = None) -> float:
        """0 when the request may go on, else the seconds to wait."""
        rate = per_minute or self.default_per_minute
        with self._lock:
            bucket = self._refilled(key_id, rate)
            if bucket.tokens >= 1:
                bucket.tokens -= 1
                return 0.0
            return (1 - bucket.tokens) * 60 / rate

    def waiting(self, key_id: str, per_minute: int | None = None) -> float:
        """The seconds until ``key_id`` has a token again (0: it has one now); takes nothing."""
        rate = per_minute or self.default_per_minute
        with self._lock:
            bucket = self._buckets.get(key_id)
            if bucket is None:
                return 0.0
            bucket = self._refilled(key_id, rate)
            return 0.0 if bucket.tokens >= 1 else (1 - bucket.tokens) * 60 / rate

    def _refilled(self, key_id: str, rate: int) -> _Bucket:
        capacity = self.burst(rate)
        now = self.clock()
        bucket = self._buckets.get(key_id)
        if bucket is None:
            if len(self._buckets) >= MAX_BUCKETS:
                self._prune(now)
            bucket = self._buckets[key_id] = _Bucket(capacity, now)
        bucket.tokens = min(capacity, bucket.tokens + (now - bucket.stamp) * rate / 60)
        bucket.stamp = now
        return bucket

    def _prune(self, now: float) -> None:
        for key in [k for k, b in self._buckets.items() if now - b.stamp > IDLE_SECONDS]:
            del self._buckets[key]
        if len(self._buckets) >= MAX_BUCKETS:  # all busy: the oldest half goes
            for key in list(self._buckets)[:len(self._buckets) - MAX_BUCKETS // 2]:
                del self._buckets[key]


@dataclass
class StreamSlots:
    """At most ``per_key`` streamed exports at a time per key."""

    per_key: int = 2
    _open: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def acquire(self, key_id: str) -> bool:
        with self._lock:
            if self._open.get(key_id, 0) >= self.per_key:
                return False
            self._open[key_id] = self._open.get(key_id, 0) + 1
            return True

    def release(self, key_id: str) -> None:
        with self._lock:
            left = self._open.get(key_id, 0) - 1
            if left > 0:
                self._open[key_id] = left
            else:
                self._open.pop(key_id, None)


def retry_after_header(seconds: float) -> str:
    return str(max(1, math.ceil(seconds)))


FAILED_LOGINS_PER_MINUTE = 30  # per client address: a burst of 5, then one every 2 s


@dataclass
class ApiState:
    es: Elasticsearch
    keys: KeyStore
    limiter: RateLimiter = field(default_factory=RateLimiter)
    streams: StreamSlots = field(default_factory=StreamSlots)
    failed_logins: RateLimiter = field(default_factory=lambda: RateLimiter(FAILED_LOGINS_PER_MINUTE))  # per address
    cursor_secret: bytes = b""
    snapshots: pages.Snapshots = field(default_factory=pages.Snapshots)
    clock: Callable[[], float] = time.time  # cursor lifetimes
    # Builds the asyncio client the one-request endpoints await on the event loop (None: they run the blocking
    # client in a worker thread). One client per event loop: a client's connections belong to the loop they
    # were opened on (uvicorn runs one loop; a test client may start several).
    async_client: Callable[[], AsyncElasticsearch] | None = None
    _async: tuple[Any, AsyncElasticsearch] | None = field(default=None, repr=False)
    lake: Lake | None = None  # what releases are built from (None: POST /v1/releases answers 503)
    release_max_records: int = 100_000
    releases: StreamSlots = field(default_factory=lambda: StreamSlots(1))  # one release build at a time per key
    release_tmp: str | None = None  # where builds happen (None: the system's temporary folder)

    def __post_init__(self) -> None:
        if not self.cursor_secret:
            self.cursor_secret = pages.secret(self.keys)

    def async_es(self) -> AsyncElasticsearch | None:
        if self.async_client is None:
            return None
        loop = asyncio.get_running_loop()
        if self._async is None or self._async[0] is not loop:
            self._async = (loop, self.async_client())
        return self._async[1]
