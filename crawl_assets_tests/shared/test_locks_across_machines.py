"""Per-source and Telegram account locks across machines: with the instance on Postgres they are advisory
locks in its database, so two processes with separate working folders (two machines: no shared disk) never
hold the same lock, a SIGKILLed holder's lock is free again at once, and no lock file is written anywhere."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from crawl_assets.locks.shared import SourceBusy, lock_key, source_lock
from crawl_assets.sources.telegram.errors import AccountBusy
from crawl_assets.sources.telegram.pacing import AccountLock
from crawl_assets_tests.conftest import REPO


class Holder:
    """Another machine: its own, empty DAGSTER_HOME; only the instance's database is shared."""

    def __init__(self, home: Path, pg_url: str, kind: str, name: str, note: str = ""):
        home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "DAGSTER_HOME": str(home), "DAGSTER_PG_URL": pg_url, "PYTHONPATH": str(REPO),
               "NOTE": note}
        self.proc = subprocess.Popen([sys.executable, "-m", "crawl_assets_tests.shared.lock_holder", kind, name],
                                     cwd=home, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def said(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def let_go(self) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        return self.said()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def machines(tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Holder]]:
    monkeypatch.setenv("DAGSTER_PG_URL", pg_url)
    started: list[Holder] = []
    yield started
    for holder in started:
        holder.close()


def lock_files(*roots: Path) -> list[Path]:
    return [p for root in roots for p in root.rglob("*.lock")]


def test_a_source_is_locked_for_every_machine_and_freed_when_its_holder_is_killed(machines, tmp_path, isolated_env,
                                                                                    pg_url):
    other = Holder(tmp_path / "machine-b", pg_url, "source", "acme.x.tl")
    machines.append(other)
    assert other.said() == "held"
    with pytest.raises(SourceBusy):
        with source_lock("acme.x.tl", wait_seconds=0.5, poll_seconds=0.1):
            pass
    with source_lock("acme.x.other", wait_seconds=0):  # another source is free
        third = Holder(tmp_path / "machine-c", pg_url, "source", "acme.x.other")
        machines.append(third)
        assert third.said() == "busy"  # and now held here, for the third machine too
    os.kill(other.proc.pid, signal.SIGKILL)
    other.proc.wait(timeout=30)
    with source_lock("acme.x.tl", wait_seconds=30, poll_seconds=0.1):  # the server ended the killed session
        again = Holder(tmp_path / "machine-c", pg_url, "source", "acme.x.tl")
        machines.append(again)
        assert again.said() == "busy"
    assert again.proc.wait(timeout=30) == 3
    assert lock_files(isolated_env, tmp_path / "machine-b", tmp_path / "machine-c") == []


def test_released_source_lock_is_taken_by_the_other_machine(machines, tmp_path, pg_url):
    with source_lock("acme.telegram.chan", wait_seconds=0):
        with source_lock("acme.telegram.chan", wait_seconds=0):  # re-entrant in the holding process
            pass
        waiting = Holder(tmp_path / "machine-b", pg_url, "source", "acme.telegram.chan")
        machines.append(waiting)
        assert waiting.said() == "busy"
    after = Holder(tmp_path / "machine-c", pg_url, "source", "acme.telegram.chan")
    machines.append(after)
    assert after.said() == "held"
    assert after.let_go() == "released"


def test_telegram_account_lock_and_its_pacing_note_are_shared(machines, tmp_path, isolated_env, pg_url):
    first = Holder(tmp_path / "machine-b", pg_url, "telegram", "acme:main", note="1767268800.25")
    machines.append(first)
    assert first.said() == "held 0.0"
    with pytest.raises(AccountBusy):
        with AccountLock(isolated_env / "locks", "acme", "main", wait_seconds=0.3):
            pass
    with AccountLock(isolated_env / "locks", "acme", "other", wait_seconds=0):  # another account is free
        pass
    assert first.let_go() == "released"
    with AccountLock(isolated_env / "locks", "acme", "main", wait_seconds=10) as lock:
        assert lock.last_request == 1767268800.25  # the spacing goes on across machines
    assert lock_files(isolated_env, tmp_path / "machine-b") == []
    engine = sa.create_engine(pg_url)
    with engine.connect() as conn:  # the advisory locks live in the instance's database, freed on release
        held = conn.execute(sa.text("SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                                   "WHERE l.locktype = 'advisory' AND d.datname = current_database()")).scalar()
    engine.dispose()
    assert held == 0


def test_without_postgres_the_locks_stay_files(isolated_env):
    with source_lock("acme.x.tl", wait_seconds=0):
        assert (isolated_env / "locks" / "sources" / "acme.x.tl.lock").exists()


def test_lock_keys_are_stable_and_distinct():
    # a deployment's machines may run different Python builds: the key must not depend on hash()
    assert lock_key("source:acme.x.tl") == lock_key("source:acme.x.tl")
    assert lock_key("source:acme.x.tl") != lock_key("source:acme.x.tm")
    assert -(2 ** 63) <= lock_key("source:acme.x.tl") < 2 ** 63
    assert lock_key("source:acme.x.tl") == int.from_bytes(
        __import__("hashlib").sha256(b"crawl_assets:source:acme.x.tl").digest()[:8], "big", signed=True)


def test_a_lock_session_the_server_ended_is_opened_again(machines, pg_url):
    engine = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")

    def end_lock_sessions() -> int:
        with engine.connect() as conn:
            return len(conn.execute(sa.text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'crawl_assets locks' "
                "AND datname = current_database()")).all())

    try:
        with source_lock("acme.x.tl", wait_seconds=0):
            assert end_lock_sessions() == 1  # e.g. a server restart: the lock is gone with the session...
        # ...its release does not fail the run, and the next lock opens a new session
        with source_lock("acme.x.tl", wait_seconds=0):
            assert end_lock_sessions() == 1
        with source_lock("acme.x.tl", wait_seconds=0):
            pass
    finally:
        engine.dispose()
