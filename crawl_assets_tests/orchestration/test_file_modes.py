"""Owner-only files (issue 30, item 13): what a sync, the registry, the API and the entry points create is readable
by its owner alone (files 0600, folders 0700), whatever the umask the process was started with; the API's cursor
secret is not in the database the API reads."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from crawl_assets.orchestration.assets import derived_assets, raw_asset
from crawl_assets.orchestration.jobs import build_batch_job
from crawl_assets_tests.orchestration.conftest import x_registry

x_posts_raw = raw_asset("x")


@pytest.fixture
def loose_umask():
    """A common default umask (022: files 0644, folders 0755), as a process that never set its own has."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def readable_by_others(*roots: Path) -> list[str]:
    return [f"{path} {oct(path.stat().st_mode & 0o777)}" for root in roots for path in (root, *root.rglob("*"))
            if path.stat().st_mode & 0o077]


def test_a_sync_writes_its_lake_and_registry_files_owner_only(tmp_path, instance, resources, loose_umask):
    x_registry(tmp_path / "sources.yaml", {"a": "data_eng", "gone": "no_such_account"})  # "gone" gets paused
    keys = ["acme.x.a", "acme.x.gone"]
    instance.add_dynamic_partitions("x_sources", keys)
    job = build_batch_job("x", [x_posts_raw, *derived_assets("x", x_posts_raw)], include_index=False)
    job.execute_in_process(run_config={"ops": {"x_sync_sources_no_index": {"config": {"partitions": keys}}}},
                           resources=resources, instance=instance, raise_on_error=False)
    lake = tmp_path / "lake"
    assert any(lake.rglob("*.jsonl.gz")) and any(lake.rglob("*.parquet")), "the sync wrote raw and normalized data"
    assert "paused" in (tmp_path / "sources.yaml").read_text()
    assert readable_by_others(lake) == []
    assert readable_by_others(*tmp_path.glob("*sources.yaml*")) == []  # the registry and its lock file


def test_the_api_database_is_owner_only_and_holds_no_signing_secret(isolated_env, loose_umask, monkeypatch):
    from crawl_assets.api.access import KeyStore, meta_table

    old = KeyStore()
    with old.engine.begin() as conn:  # what an earlier version stored: the secret in clear in the database
        conn.execute(meta_table.insert().values(name="cursor_secret", value="ab" * 32))
    old.close()
    store = KeyStore()
    store.create("acme", "analyst")
    secret = store.shared_secret("cursor_secret")
    assert secret == KeyStore().shared_secret("cursor_secret"), "every worker signs with the same secret"
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(meta_table)).all() == []
    store.close()
    database = isolated_env / "storage" / "crawl_api.db"
    assert secret.hex().encode() not in database.read_bytes() and b"ab" * 32 not in database.read_bytes()
    assert readable_by_others(database, isolated_env / "storage", isolated_env / "secrets") == []
    monkeypatch.setenv("CRAWL_API_CURSOR_SECRET", "a shared secret of the workers of several machines")
    assert KeyStore().shared_secret("cursor_secret") not in (secret, b"")


def test_every_entry_point_makes_its_process_create_owner_only_files(tmp_path, isolated_env, loose_umask, monkeypatch):
    registry = tmp_path / "new" / "sources.yaml"
    added = subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", "sources", "add", "--platform", "x", "--kind",
                            "search_query", "--identifier", "q", "--name", "n", "--registry", str(registry)],
                           capture_output=True, text=True, timeout=120, preexec_fn=lambda: os.umask(0o022))
    assert added.returncode == 0, added.stderr
    assert readable_by_others(registry.parent) == []  # the folder, the registry, its lock file
    from crawl_assets.webhooks.app import create_app

    create_app(registry_path=registry, lake_root=str(tmp_path / "lake"), environ={})
    assert os.umask(0o022) == 0o077
    from crawl_assets.api import server

    monkeypatch.setenv("CRAWL_ES_URL", "http://127.0.0.1:9")  # nothing is asked of it while the app is built
    server.app()  # each API worker
    assert os.umask(0o022) == 0o077
    import crawl_assets.definitions

    importlib.reload(crawl_assets.definitions)  # a code location or run loading the definitions
    assert os.umask(0o022) == 0o077
