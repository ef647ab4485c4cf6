"""Exclusive named locks that hold on one machine or across many: Postgres advisory locks when the instance
is on Postgres, ``flock`` files for the single-machine SQLite default (``open_locked``; ``exclusive`` holds
one around a registry file's write). ``flock`` rather than a pid file: the kernel drops the lock when its
holder dies, so a SIGKILLed run never leaves a stale lock behind.

Runs of one deployment on several machines (a run launcher putting each run in its own pod) share only the
instance's database, the lake and the index; a lock file on one machine's disk excludes nobody on another.
So with the instance on Postgres a lock is a session-level advisory lock (``pg_try_advisory_lock``) keyed by
a stable 64-bit hash of its name, taken on one connection per process. Postgres drops a session's locks when
the session ends: a SIGKILLed holder's kernel closes its socket at once, and TCP keepalives end the session
of a holder whose machine vanished (about a minute), so no lock outlives its holder, as with ``flock``.

Both kinds exclude every other holder, threads of the same process included (re-entrancy, where wanted, is
the caller's: ``source_lock``). A lock may carry a short note kept for its next holder (the Telegram
pacer's time of the last request): in the lock file, or in the table ``crawl_lock_notes`` on Postgres.

One sync of a source at a time, whatever launched it and on whichever machine: an exclusive lock per source.

Dagster's run tag limit (dagster.yaml) keeps two single-source runs apart, but batch runs and
single-run range backfills carry no per-partition tag; this lock covers them all. With the instance on
Postgres it is an advisory lock in the instance's database (runs on several machines exclude each other);
on SQLite an ``flock`` on ``$DAGSTER_HOME/locks/sources/<key>.lock`` (``source_lock`` below). Either
is dropped when its holder dies (a SIGKILLed run worker never leaves a stale lock), and it is re-entrant
inside one process (a batch holds it around all steps of a source, and the raw step inside takes it again).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from crawl_assets import settings
from crawl_assets.core.private import FILE_MODE, make_dirs
from crawl_assets.instance import db as instance_db


log = logging.getLogger(__name__)
NOTES_TABLE = "crawl_lock_notes"
MAX_NOTE_BYTES = 256
# a holder whose machine vanished is dropped by the server after idle + interval * count seconds
_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}


# -- flock files ---------------------------------------------------------------------------------------------
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


class HeldLock(Protocol):
    def read_note(self) -> str: ...

    def write_note(self, note: str) -> None: ...

    def release(self) -> None: ...


def lock_key(name: str) -> int:
    """The advisory lock key of ``name``: the first 8 bytes of its SHA-256, as Postgres' signed bigint.
    Stable across processes, machines and Python versions (unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256(f"crawl_assets:{name}".encode()).digest()[:8], "big", signed=True)


def acquire(name: str, path: Path, wait_seconds: float, poll_seconds: float = 0.2, mode: int = 0o600) -> HeldLock | None:
    """Hold lock ``name`` (``path`` is its file when the instance is on SQLite), waiting up to
    ``wait_seconds`` for another holder; None when it kept it."""
    if settings.postgres_configured():
        return _advisory().acquire(name, wait_seconds, poll_seconds)
    fd = open_locked(path, wait_seconds, poll_seconds, mode)
    return None if fd is None else _FileLock(fd)


class _FileLock:
    def __init__(self, fd: int):
        self._fd: int | None = fd

    def read_note(self) -> str:
        assert self._fd is not None
        return os.pread(self._fd, MAX_NOTE_BYTES, 0).decode(errors="replace")

    def write_note(self, note: str) -> None:
        assert self._fd is not None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, note.encode()[:MAX_NOTE_BYTES], 0)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            unlock(fd)


class _AdvisoryLock:
    def __init__(self, owner: _Advisory, name: str, key: int):
        self._owner, self.name, self.key = owner, name, key
        self._held = True

    def read_note(self) -> str:
        rows = self._owner.execute(f"SELECT note FROM {NOTES_TABLE} WHERE name = %s", (self.name,))
        return rows[0][0] if rows else ""

    def write_note(self, note: str) -> None:
        self._owner.execute(f"INSERT INTO {NOTES_TABLE} (name, note) VALUES (%s, %s) ON CONFLICT (name) "
                            "DO UPDATE SET note = EXCLUDED.note", (self.name, note[:MAX_NOTE_BYTES]))

    def release(self) -> None:
        if self._held:
            self._held = False
            self._owner.release(self.key)


class _Advisory:
    """This process's lock session: one connection, the keys it holds (a key is held once per process)."""

    def __init__(self, url: str):
        self.url = url
        self._conn: Any = None
        self._held: set[int] = set()
        self._guard = threading.Lock()

    def _connection(self) -> Any:
        if self._conn is None or self._conn.closed:
            if self._held:  # the server ended the session (a restart): its locks are gone
                log.warning("the lock session to Postgres ended while holding %d lock(s); reconnecting", len(self._held))
                self._held.clear()
            conn = instance_db.connect(self.url, "crawl_assets locks", **_KEEPALIVES)
            instance_db.create_table(conn, NOTES_TABLE, "name TEXT PRIMARY KEY, note TEXT NOT NULL")
            self._conn = conn
        return self._conn

    def _run(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """``sql`` on the lock session (the guard held); a session the server ended is opened again once."""
        import psycopg2

        for attempt in (1, 2):
            try:
                with self._connection().cursor() as cur:
                    cur.execute(sql, params)
                    return cur.fetchall() if cur.description else []
            except (psycopg2.OperationalError, psycopg2.InterfaceError):
                if self._conn is not None:
                    self._conn.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._guard:
            return self._run(sql, params)

    def _try(self, key: int) -> bool:
        with self._guard:
            if key in self._held:
                return False
            got = bool(self._run("SELECT pg_try_advisory_lock(%s)", (key,))[0][0])
            if got:
                self._held.add(key)
            return got

    def acquire(self, name: str, wait_seconds: float, poll_seconds: float) -> _AdvisoryLock | None:
        key = lock_key(name)
        deadline = time.monotonic() + wait_seconds
        while not self._try(key):
            if time.monotonic() >= deadline:
                return None
            time.sleep(poll_seconds)
        return _AdvisoryLock(self, name, key)

    def release(self, key: int) -> None:
        import psycopg2

        with self._guard:
            if key not in self._held:
                return  # the session it was taken on ended (and released it)
            self._held.discard(key)
            try:
                with self._connection().cursor() as cur:
                    cur.execute("SELECT pg_advisory_unlock(%s)", (key,))
            except (psycopg2.OperationalError, psycopg2.InterfaceError):
                self._conn.close()  # the session is gone, and its locks with it


_sessions: dict[str, _Advisory] = {}
_sessions_guard = threading.Lock()


def _advisory() -> _Advisory:
    """The lock session of this process and instance database (a forked child opens its own)."""
    url = instance_db.postgres_url()
    with _sessions_guard:
        session = _sessions.get(url)
        if session is None:
            session = _sessions[url] = _Advisory(url)
        return session


def _forget_inherited_sessions() -> None:
    """In a forked child: the parent's lock connections are the parent's. Closing them here would end the
    parent's session (and drop its locks), so their sockets are pointed at /dev/null before they are let go."""
    global _sessions_guard
    _sessions_guard = threading.Lock()  # another thread may have held it at the fork
    inherited = list(_sessions.values())
    _sessions.clear()
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for session in inherited:
            conn = session._conn
            if conn is not None and not conn.closed:
                os.dup2(null, conn.fileno())
    finally:
        os.close(null)


os.register_at_fork(after_in_child=_forget_inherited_sessions)


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
