"""Shared fixtures: every test gets its own DAGSTER_HOME, lake and registry; Postgres tests get a
fresh database on the server named by CRAWL_TEST_PG_URL (skipped when it is unset, e.g. on a laptop)."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The suite names its indices with the default prefix, session fixtures included: a developer's own
# deployment prefix must neither rename them nor have its indices wiped by the tests.
os.environ.pop("CRAWL_INDEX_PREFIX", None)

# The real Elasticsearch node of the session (es_url, es_cluster, fault_proxy); the local S3 server (s3_lake);
# the tiers (unit, integration, system) and the run order; the worlds made once per session (demo_home).
pytest_plugins = ["crawl_assets_tests.es_node.fixtures", "crawl_assets_tests.shared.s3_server", "crawl_assets_tests.tiers",
                  "crawl_assets_tests.worlds"]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """No test reads or writes ./.crawl_home or a developer's real settings."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("CRAWL_LAKE", str(tmp_path / "lake"))
    monkeypatch.setenv("CRAWL_REGISTRY", str(tmp_path / "sources.yaml"))
    monkeypatch.setenv("CRAWL_IMPORT_ROOT", str(tmp_path / "imports"))  # instance_for_test moves DAGSTER_HOME
    for var in ("DAGSTER_PG_URL", "DAGSTER_PG_HOST", "CRAWL_ES_URL", "CRAWL_ES_API_KEY", "CRAWL_INDEX_PREFIX"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def dagster_home(isolated_env: Path) -> Path:
    """DAGSTER_HOME holding the project's dagster.yaml."""
    shutil.copyfile(REPO / "dagster.yaml", isolated_env / "dagster.yaml")
    return isolated_env


@contextmanager
def new_database(base: str) -> Iterator[str]:
    """A new, empty database on the server of ``base`` (a SQLAlchemy URL); dropped afterwards."""
    import sqlalchemy as sa

    name = f"crawl_test_{uuid.uuid4().hex[:12]}"
    # pool_pre_ping: a test may restart the server (faults/test_outages.py); the pooled connection is then dead.
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT", pool_pre_ping=True)
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = base.rsplit("/", 1)[0] + f"/{name}"
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n AND pid <> pg_backend_pid()"
            ), {"n": name})
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()


@pytest.fixture
def pg_url():
    """A new, empty database for one test; dropped afterwards."""
    base = os.environ.get("CRAWL_TEST_PG_URL")
    if not base:
        pytest.skip("CRAWL_TEST_PG_URL is not set (PostgreSQL-backed tests are off)")
    with new_database(base) as url:
        yield url
