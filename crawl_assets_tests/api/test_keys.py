"""API keys: created, listed and revoked with the CLI, stored as SHA-256 digests in the instance's database
(SQLite under DAGSTER_HOME, or the Postgres of DAGSTER_PG_URL), never shown again, never logged."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time

import httpx
import pytest
import sqlalchemy as sa

from crawl_assets_tests.conftest import REPO


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", "api", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})}, cwd=REPO)


def _every_stored_value(url: str) -> str:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        rows = [str(v) for table in ("crawl_api_keys", "crawl_api_meta")
                for row in conn.execute(sa.text(f"SELECT * FROM {table}")) for v in row]
    engine.dispose()
    return "\n".join(rows)


def _lifecycle(env: dict[str, str], url: str) -> None:
    made = cli("keys", "create", "--tenant", "acme", "--name", "notebook", "--rate", "120", env=env)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert re.fullmatch(r"cak_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", key) and "shown once" in made.stderr
    key_id, secret = key[4:16], key[17:]
    listed = cli("keys", "list", env=env)
    assert key_id in listed.stdout and "acme" in listed.stdout and "active" in listed.stdout and "120" in listed.stdout
    assert secret not in listed.stdout + listed.stderr
    stored = _every_stored_value(url)
    assert secret not in stored and key not in stored, "only a digest is stored"
    import hashlib

    assert hashlib.sha256(secret.encode()).hexdigest() in stored
    from crawl_assets.api.keys import KeyStore

    store = KeyStore(url, cache_seconds=0)
    assert store.verify(key).tenant == "acme"
    assert cli("keys", "revoke", key_id, env=env).returncode == 0
    assert store.verify(key) is None and "revoked" in cli("keys", "list", env=env).stdout
    assert cli("keys", "revoke", key_id, env=env).returncode == 1, "already revoked"
    store.close()
    bad = cli("keys", "create", "--tenant", "../acme", "--name", "x", env=env)
    assert bad.returncode == 2 and "invalid tenant" in bad.stderr


def test_keys_on_the_sqlite_instance(dagster_home) -> None:
    _lifecycle({}, f"sqlite:///{dagster_home / 'storage' / 'crawl_api.db'}")


def test_keys_on_the_postgres_instance(dagster_home, pg_url: str) -> None:
    _lifecycle({"DAGSTER_PG_URL": pg_url}, pg_url)
    assert not (dagster_home / "storage" / "crawl_api.db").exists(), "nothing went to SQLite"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_served_api_answers_and_never_logs_a_key(world, tmp_path) -> None:
    """`crawl-assets api serve` as a user runs it (uvicorn, access log on): requests with a good key, a wrong
    key and a key in the URL; the key appears nowhere in what the server printed."""
    env = {"DAGSTER_HOME": str(world.home), "CRAWL_ES_URL": world.url}
    made = cli("keys", "create", "--tenant", "demo", "--name", "served", env=env)
    key = made.stdout.strip()
    port = _free_port()
    log = open(tmp_path / "serve.log", "w+")
    proc = subprocess.Popen([sys.executable, "-m", "crawl_assets.cli.main", "api", "serve", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env}, cwd=REPO)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        ok = httpx.get(f"{base}/v1/search", params={"q": "خبر"}, headers={"Authorization": f"Bearer {key}"}, timeout=30)
        assert ok.status_code == 200 and ok.json()["total"] > 0
        assert httpx.get(f"{base}/v1/search", headers={"Authorization": f"Bearer {key[:-1]}x"}).status_code == 401
        assert httpx.get(f"{base}/v1/search", params={"api_key": key}, headers={"X-API-Key": key}).status_code == 400
        assert httpx.get(f"{base}/openapi.json").json()["info"]["title"] == "crawl_assets API"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    log.seek(0)
    printed = log.read()
    assert "GET /v1/search" in printed, "the access log is on"
    assert key[17:] not in printed, "the secret part of a key is never logged"
    assert "api_key=[redacted]" in printed, "the refused URL is logged with the key redacted"
