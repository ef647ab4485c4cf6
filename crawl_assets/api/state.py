"""What every request of the API reads from its app: the clients, the key store, the limits and slots, the
cursor secret (``ApiState``, ``app.state.api``). Routes import it from here; ``app.py`` builds it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from elasticsearch import AsyncElasticsearch, Elasticsearch

from crawl_assets.api import cursor
from crawl_assets.api.keys import KeyStore
from crawl_assets.api.ratelimit import RateLimiter, StreamSlots
from crawl_assets.lake import Lake

FAILED_LOGINS_PER_MINUTE = 30  # per client address: a burst of 5, then one every 2 s


@dataclass
class ApiState:
    es: Elasticsearch
    keys: KeyStore
    limiter: RateLimiter = field(default_factory=RateLimiter)
    streams: StreamSlots = field(default_factory=StreamSlots)
    failed_logins: RateLimiter = field(default_factory=lambda: RateLimiter(FAILED_LOGINS_PER_MINUTE))  # per address
    cursor_secret: bytes = b""
    snapshots: cursor.Snapshots = field(default_factory=cursor.Snapshots)
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
            self.cursor_secret = cursor.secret(self.keys)

    def async_es(self) -> AsyncElasticsearch | None:
        if self.async_client is None:
            return None
        loop = asyncio.get_running_loop()
        if self._async is None or self._async[0] is not loop:
            self._async = (loop, self.async_client())
        return self._async[1]
