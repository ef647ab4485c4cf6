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
    from crawl_assets.api.access import KeyStore

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
        attempts = [f"/v1/search?{name}={spelling}" for name in ("Key", "%6Bey", "q") for spelling in _every_spelling(key)]
        attempts += ["/v1/search?token=x"] * 5
        for path in attempts:  # refused (a key in the URL, in any spelling), each logged without it
            resp = httpx.get(base + path, headers={"X-API-Key": key})
            assert resp.status_code == 400 and "Authorization header" in resp.json()["message"], (path, resp.text)
        assert httpx.get(f"{base}/openapi.json").json()["info"]["title"] == "crawl_assets API"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    log.seek(0)
    printed = log.read()
    assert "GET /v1/search" in printed, "the access log is on"
    assert key[17:] not in _plain(printed) and key[17:].lower() not in _plain(printed).lower(), \
        "the secret part of a key is never logged, in any spelling"
    assert "api_key=[redacted]" in printed, "the refused URL is logged with the key redacted"
    refused = [line for line in printed.splitlines() if '"GET /v1/search?' in line and " 400 " in line]
    assert len(refused) == 1 + len(attempts), "every refused request has its access line"
    assert "Logging error" not in printed and "Traceback" not in printed, printed[-3000:]


SECRET_PARTS = "Zk2abc-DEF_ghiJKLmnoPQRstuVWXyz0123456789_-A"[:43]
KEY = f"cak_3f9c0a51b2de_{SECRET_PARTS}"


def _every_spelling(key: str) -> list[str]:
    """The key as a URL may carry it: plain, `_` percent-encoded, every character encoded, encoded twice."""
    every = "".join(f"%{ord(c):02X}" for c in key)
    return [key, key.replace("_", "%5F"), key.replace("_", "%5f"), every, every.replace("%", "%25"), key.upper()]


def _plain(text: str) -> str:
    from urllib.parse import unquote_plus

    for _ in range(4):
        text = unquote_plus(text)
    return text


ACCESS_ATTEMPTS = [f"/v1/search?{name}={spelling}" for name in ("api_key", "Key", "TOKEN", "%6Bey", "Access-Token", "q")
                   for spelling in _every_spelling(KEY)] + [
    "/v1/search?token=x", f"/v1/records/{KEY}", f"/v1/records/{KEY.replace('_', '%5F')}", f"/v1/search?q=a&x={KEY}&y=b"]


def test_the_access_log_keeps_its_line_and_loses_the_key() -> None:
    """The access line as uvicorn logs it (its own formatter and format), for a key in the URL spelled every way:
    each line is written, none holds the key's secret in any spelling."""
    import io
    import logging

    from uvicorn.config import LOGGING_CONFIG
    from uvicorn.logging import AccessFormatter

    from crawl_assets.api.server import RedactKeys

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(AccessFormatter(LOGGING_CONFIG["formatters"]["access"]["fmt"], use_colors=False))
    logger = logging.getLogger("crawl_assets_tests.access")
    logger.propagate, logger.level, logger.handlers, logger.filters = False, logging.INFO, [handler], [RedactKeys()]
    for path in ACCESS_ATTEMPTS:  # uvicorn's call (protocols/http/*_impl.py)
        logger.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:50000", "GET", path, "1.1", 400)
    lines = out.getvalue().splitlines()
    assert len(lines) == len(ACCESS_ATTEMPTS), out.getvalue()[:2000]
    for line in lines:
        assert '"GET /v1/' in line and line.endswith(" 400 Bad Request"), line
        assert SECRET_PARTS not in _plain(line) and SECRET_PARTS.lower() not in _plain(line).lower(), line
    assert "3f9c0a51b2de" in lines[-1], "the key's id stays (it names the key in listings)"
