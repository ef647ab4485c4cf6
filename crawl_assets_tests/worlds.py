"""Expensive worlds made once per test session and copied by the tests that start from them (a pytest plugin
of the root conftest).

``build_once(name, build)`` builds a folder once for the whole session, also across ``pytest-xdist`` workers
(a file lock in the session's shared temporary root; the first worker builds, the others wait and reuse it).

* ``demo_home``: ``crawl-assets demo`` run once as a newcomer runs it (a subprocess, an empty
  ``DAGSTER_HOME``, no cluster): its output, and the home it made. ``copy_to(path)`` gives a test its own copy
  of the home as the demo left it; only the test of the demo itself runs in the original. The UI tests and
  the docs-commands test start from copies.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from crawl_assets_tests.conftest import REPO


def session_root(factory: pytest.TempPathFactory) -> Path:
    """The temporary root every worker of this session shares (a worker's own base is one level below it)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """``root/name``, made by ``build(folder)`` by the first worker to ask; ``Done`` marks it complete."""
    root = session_root(factory)
    folder = root / name
    with open(root / f"{name}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (folder / ".done").exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                build(folder)
                (folder / ".done").touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return folder


@contextmanager
def world_env(base: Path, es_url: str) -> Iterator[None]:
    """While a session fixture builds a world in ``base``: its instance, lake, registry and import root there,
    the test node as the cluster, no Postgres instance (tests' own settings come back afterwards)."""
    from crawl_assets_tests.es_node.fixtures import credentials_env

    with pytest.MonkeyPatch.context() as mp:
        for name, value in {"DAGSTER_HOME": str(base / "home"), "CRAWL_LAKE": str(base / "lake"),
                            "CRAWL_REGISTRY": str(base / "sources.yaml"), "CRAWL_IMPORT_ROOT": str(base / "imports"),
                            "CRAWL_ES_URL": es_url, **credentials_env()}.items():
            mp.setenv(name, value)
        for name in ("DAGSTER_PG_URL", "DAGSTER_PG_HOST"):
            mp.delenv(name, raising=False)
        yield


def user_env(home: Path) -> dict[str, str]:
    """A newcomer's environment: DAGSTER_HOME only (no cluster, no X token, default lake, registry, import root,
    enrichment and retention settings: all under the home)."""
    drop = {"CRAWL_LAKE", "CRAWL_REGISTRY", "CRAWL_IMPORT_ROOT", "CRAWL_ENRICHMENT", "CRAWL_RETENTION", "CRAWL_ES_URL",
            "CRAWL_ES_API_KEY", "CRAWL_ES_USERNAME", "CRAWL_ES_PASSWORD", "DAGSTER_PG_URL", "DAGSTER_PG_HOST"}
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("CRAWL_X_")}
    return {**env, "DAGSTER_HOME": str(home)}


@dataclass(frozen=True)
class DemoHome:
    home: Path  # where the demo ran (the demo's own test runs it again there)
    pristine: Path  # a copy made right after, that copies are taken from
    returncode: int
    stdout: str
    stderr: str

    def copy_to(self, target: Path) -> Path:
        """``target``: a copy of the home as the demo left it (file times kept)."""
        shutil.copytree(self.pristine, target, symlinks=True)
        return target


@pytest.fixture(scope="session")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> DemoHome:
    def build(folder: Path) -> None:
        home = folder / "crawl_home"
        done = subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", "demo"], capture_output=True,
                              text=True, timeout=900, env=user_env(home), cwd=REPO)
        (folder / "result.json").write_text(json.dumps({"returncode": done.returncode, "stdout": done.stdout,
                                                        "stderr": done.stderr}))
        if home.exists():
            shutil.copytree(home, folder / "pristine", symlinks=True)

    folder = build_once(tmp_path_factory, "demo_home", build)
    result = json.loads((folder / "result.json").read_text())
    return DemoHome(folder / "crawl_home", folder / "pristine", **result)
