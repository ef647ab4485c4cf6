"""Secrets never reach storage (issue 15, item 4): a password in CRAWL_ES_URL was kept in the instance's
compressed repository snapshot, which a text search of the tables could not see."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import zlib

import pytest

from crawl_assets import definitions  # imported before any test sets CRAWL_ES_URL
from crawl_assets_tests.secrets.storage import sqlite_hits

CANARY = "CANARYe5ur1p4ssw0rd"


def test_the_storage_search_sees_compressed_and_binary_columns(tmp_path):
    with sqlite3.connect(tmp_path / "x.db") as conn:
        conn.execute("CREATE TABLE snapshots (id INTEGER, snapshot_body BLOB, note TEXT)")
        conn.execute("INSERT INTO snapshots VALUES (1, ?, 'nothing')", (zlib.compress(f'{{"url": "{CANARY}"}}'.encode()),))
    hits, tables = sqlite_hits(tmp_path, CANARY)
    assert hits == ["x.db:snapshots.snapshot_body"] and tables == {"snapshots"}
    assert CANARY.encode() not in (tmp_path / "x.db").read_bytes(), "only a decompressing search finds it"


def test_an_es_url_with_a_password_is_refused_and_stored_nowhere(tmp_path, monkeypatch, es_cluster):
    home = tmp_path / "home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    # a reachable cluster: the URL is refused for its password, not for being unreachable
    monkeypatch.setenv("CRAWL_ES_URL", es_cluster.url.replace("http://", f"http://elastic:{CANARY}@"))
    result = subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", "demo", "--home", str(home)],
                            capture_output=True, text=True, timeout=600, env=os.environ.copy())
    hits, _ = sqlite_hits(home, CANARY)
    assert not hits, f"the password is in the instance's storage: {hits}"
    assert result.returncode == 2, result.stdout + result.stderr
    assert "CRAWL_ES_PASSWORD" in result.stderr and CANARY not in result.stdout + result.stderr
    from crawl_assets.orchestration import resources

    with pytest.raises(ValueError) as caught:
        definitions.build_definitions()
    assert isinstance(caught.value, getattr(resources, "CredentialsInUrl")) and CANARY not in str(caught.value)
