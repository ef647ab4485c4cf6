"""Who may call the API and how much: API keys, the secret that signs cursors, the per-key limits, and what
every request reads from its app (``ApiState``, ``app.state.api``: the clients, the key store, the limits and
slots, the cursor secret; routes import it from here, ``app.py`` builds it).

Keys are created, listed and revoked by the operator (``crawl-assets api keys``), each bound to one tenant. A key
is ``cak_<id>_<secret>``: ``id`` is 12 hex characters (48 random bits) that name the key in listings and logs,
``secret`` 32 random bytes (256 bits, URL-safe base64). Only the SHA-256 of the secret is stored, in table
``crawl_api_keys`` of the Dagster instance's database (``settings.postgres_configured``: the instance's Postgres, or
SQLite in ``$DAGSTER_HOME/storage/crawl_api.db`` beside Dagster's own files, so API lookups never wait on the
daemon's SQLite locks; that file is 0600).

Why SHA-256 and not a slow password hash: slow hashes (bcrypt, scrypt, argon2) exist to make guessing a
low-entropy *password* from its hash expensive. A 256-bit random secret cannot be guessed whatever the
hash costs (2^256 tries), so a single SHA-256 is as safe and keeps every request's check to microseconds;
the comparison is constant-time. The full key is shown once, at creation; it is never stored, logged or
listed. Verified keys are cached for ``cache_seconds`` (default 5): a revocation takes effect within that time.

The API's signing secrets (the one that signs cursors) live apart: never in the database the API reads, which
also holds the key hashes and which more people and processes can read than need this secret.
``CRAWL_API_CURSOR_SECRET`` (any text of 32 characters or more, the same for every worker on every machine)
when it is set; else a file of 32 random bytes made once, 0600 in a 0700 folder, under
``$DAGSTER_HOME/secrets/`` (every worker on this machine reads the same one; workers on several machines need
the variable).

The limits: per key, a token bucket of requests per minute (``RateLimiter``) and a cap on concurrent streamed
exports (``StreamSlots``); the same bucket counts each client address's failed logins. The bucket holds
``burst`` tokens (a sixth of the per-minute rate, at least 5) and refills continuously; a request takes one
token or is refused with the seconds until the next one (``Retry-After``). State is per process: with
``--workers N`` each worker grants the rate, so a key gets at most ``N`` times it. At most ``MAX_BUCKETS``
buckets are kept: past it, the idle ones go (full again by then), then the oldest.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import math
import os
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from elasticsearch import AsyncElasticsearch, Elasticsearch

from crawl_assets import settings
from crawl_assets.api import pages
from crawl_assets.core import names
from crawl_assets.core.private import make_dirs, open_new, private_file
from crawl_assets.instance import db as instance_db
from crawl_assets.lake import Lake


# -- keys ----------------------------------------------------------------------------------------------------
PREFIX = "cak_"
KEY_RE = re.compile(r"cak_([0-9a-f]{12})_([A-Za-z0-9_-]{43})")
ID_RE = re.compile(r"[0-9a-f]{12}")
MAX_NAME = 200
MIN_CHARS = 32  # of CRAWL_API_CURSOR_SECRET

metadata = sa.MetaData()
keys_table = sa.Table(
    "crawl_api_keys", metadata,
    sa.Column("key_id", sa.String(12), primary_key=True),
    sa.Column("tenant", sa.String(63), nullable=False, index=True),
    sa.Column("name", sa.String(MAX_NAME), nullable=False),
    sa.Column("secret_sha256", sa.String(64), nullable=False),
    sa.Column("rate_per_minute", sa.Integer, nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
)
meta_table = sa.Table(
    "crawl_api_meta", metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("value", sa.String(256), nullable=False),
)


@dataclass(frozen=True)
class ApiKey:
    """A key as listed: never its secret or hash."""

    key_id: str
    tenant: str
    name: str
    rate_per_minute: int | None
    created_at: datetime
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def database_url() -> str:
    if settings.postgres_configured():
        return instance_db.postgres_url()
    return f"sqlite:///{private_file(Path(settings.sqlite_dir(), 'crawl_api.db'))}"  # key hashes: 0600


class KeyStore:
    def __init__(self, url: str | None = None, cache_seconds: float = 5.0) -> None:
        self.url = url or database_url()
        self.engine = sa.create_engine(self.url, pool_pre_ping=True)
        metadata.create_all(self.engine)
        self.cache_seconds = cache_seconds
        self._cache: dict[str, tuple[float, ApiKey | None, str | None]] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self.engine.dispose()

    def create(self, tenant: str, name: str, rate_per_minute: int | None = None) -> tuple[ApiKey, str]:
        """A new key for ``tenant``: (its listing, the full key to hand over once)."""
        names.check_tenant(tenant)
        if not name or len(name) > MAX_NAME or any(ord(c) < 32 for c in name):
            raise ValueError(f"a key name is 1-{MAX_NAME} printable characters")
        if rate_per_minute is not None and not 1 <= rate_per_minute <= 100_000:
            raise ValueError("rate_per_minute must be between 1 and 100000")
        key_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        row = ApiKey(key_id, tenant, name, rate_per_minute, datetime.now(timezone.utc), None)
        with self.engine.begin() as conn:
            conn.execute(keys_table.insert().values(key_id=key_id, tenant=tenant, name=name, secret_sha256=_digest(secret),
                                                    rate_per_minute=rate_per_minute, created_at=row.created_at))
        return row, f"{PREFIX}{key_id}_{secret}"

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        query = sa.select(keys_table).order_by(keys_table.c.tenant, keys_table.c.created_at)
        if tenant is not None:
            query = query.where(keys_table.c.tenant == tenant)
        with self.engine.connect() as conn:
            return [self._row(r) for r in conn.execute(query)]

    def revoke(self, key_id: str) -> bool:
        """Revoke a key by id; False when there is no active key of that id."""
        if not ID_RE.fullmatch(key_id or ""):
            raise ValueError(f"invalid key id {key_id!r}: 12 hex characters, as `crawl-assets api keys list` shows")
        with self.engine.begin() as conn:
            done = conn.execute(keys_table.update().where(keys_table.c.key_id == key_id, keys_table.c.revoked_at.is_(None))
                                .values(revoked_at=datetime.now(timezone.utc))).rowcount
        with self._lock:
            self._cache.pop(key_id, None)
        return bool(done)

    def verify_cached(self, presented: str) -> tuple[bool, ApiKey | None]:
        """``(True, what verify answers)`` when that needs no database read (a malformed key, or its row
        cached less than ``cache_seconds`` ago), else ``(False, None)``: then call ``verify``. The API's
        event loop calls this, and hands only a cache miss to a worker thread."""
        match = KEY_RE.fullmatch(presented or "")
        if not match:
            return True, None
        key_id, secret = match.groups()
        with self._lock:
            cached = self._cache.get(key_id)
        if cached is None or time.monotonic() - cached[0] > self.cache_seconds:
            return False, None
        return True, self._checked(cached, secret)

    def verify(self, presented: str) -> ApiKey | None:
        """The active key ``presented`` is, else None (malformed, unknown, wrong secret or revoked)."""
        match = KEY_RE.fullmatch(presented or "")
        if not match:
            return None
        key_id, secret = match.groups()
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(key_id)
        if cached is None or now - cached[0] > self.cache_seconds:
            with self.engine.connect() as conn:
                row = conn.execute(sa.select(keys_table).where(keys_table.c.key_id == key_id)).first()
            cached = (now, self._row(row) if row else None, row.secret_sha256 if row else None)
            with self._lock:
                if len(self._cache) > 10_000:
                    self._cache.clear()
                self._cache[key_id] = cached
        return self._checked(cached, secret)

    @staticmethod
    def _checked(cached: tuple[float, ApiKey | None, str | None], secret: str) -> ApiKey | None:
        _, key, digest = cached
        if key is None or digest is None or not hmac.compare_digest(digest, _digest(secret)) or not key.active:
            return None
        return key

    def shared_secret(self, name: str) -> bytes:
        """A random 256-bit secret, the same for every worker (signs cursors): kept out of this database
        (``signing_secret`` below); one an earlier version stored here is deleted."""
        with self.engine.begin() as conn:
            conn.execute(meta_table.delete().where(meta_table.c.name == name))
        return signing_secret(name)

    @staticmethod
    def _row(r: sa.Row) -> ApiKey:
        def utc(v: datetime | None) -> datetime | None:
            return v.replace(tzinfo=timezone.utc) if v is not None and v.tzinfo is None else v

        return ApiKey(r.key_id, r.tenant, r.name, r.rate_per_minute, utc(r.created_at), utc(r.revoked_at))


def cursor_secret(keys: KeyStore) -> bytes:
    """The secret cursors are sealed with: the same for every worker process."""
    return keys.shared_secret("cursor_secret")


def secret_path(name: str) -> Path:
    return settings.dagster_home() / "secrets" / f"api-{name}.key"


def signing_secret(name: str) -> bytes:
    """The secret ``name`` (32 bytes): from the environment, else from its owner-only file (made the first time)."""
    configured = settings.api_cursor_secret() if name == "cursor_secret" else ""
    if configured:
        if len(configured) < MIN_CHARS:
            raise ValueError(f"CRAWL_API_CURSOR_SECRET must be at least {MIN_CHARS} characters")
        return hashlib.sha256(configured.encode()).digest()
    path = secret_path(name)
    make_dirs(path.parent)
    try:
        with open_new(path, exclusive=True) as fh:  # of two workers starting at once, one writes it
            fh.write(secrets.token_hex(32).encode())
    except FileExistsError:
        pass
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)
    for _ in range(50):  # the writer may not have finished its 64 characters yet
        text = path.read_text().strip()
        if len(text) == 64:
            return bytes.fromhex(text)
        time.sleep(0.01)
    raise ValueError(f"{path}: not a signing secret (64 hexadecimal characters); remove it to have a new one made")


# -- limits and the app's state -----------------------------------------------------------------------------
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
            self.cursor_secret = cursor_secret(self.keys)

    def async_es(self) -> AsyncElasticsearch | None:
        if self.async_client is None:
            return None
        loop = asyncio.get_running_loop()
        if self._async is None or self._async[0] is not loop:
            self._async = (loop, self.async_client())
        return self._async[1]
