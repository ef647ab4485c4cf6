"""Fixtures of the fault tests: stand-ins shared by a clean run and a faulted one, a fork server, a
scratch root on tmpfs when there is one (the Dagster SQLite instance is much faster there). The index
is the session's real node: a clean run's snapshot is taken, then the node is emptied for the faulted run."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from crawl_assets_tests.faults.harness import ForkServer
from crawl_assets_tests.standins.x_api import XAPIServer
from crawl_assets_tests.standins.x_corpus import build_corpus


# The X corpus ends at the same moment for every test of the session: the same seed and end give the same
# posts, so one clean sync's snapshot stands for every test whose faulted sync reads that corpus.
CORPUS_END = datetime.now(timezone.utc).replace(microsecond=0)


def scale() -> float:
    """``CRAWL_FAULTS_SCALE`` (default 1): multiplies data sizes and kill points; bench/fuzz_full.py faults sets 4."""
    return float(os.environ.get("CRAWL_FAULTS_SCALE", "1"))


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else str(tmp_path)
    root = Path(tempfile.mkdtemp(prefix="crawl-faults-", dir=base))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def x_server() -> Iterator[XAPIServer]:
    corpus = build_corpus(int(1200 * scale()), days=30, now=CORPUS_END)
    with XAPIServer(corpus, timeout_sleep=0.5) as server:
        yield server


@pytest.fixture
def fork_server(scratch: Path) -> Iterator[ForkServer]:
    server = ForkServer(scratch)
    try:
        yield server
    finally:
        server.close()
