"""Fixtures for the X collector: a small corpus, the v2 stand-in on 127.0.0.1, clients, a real lake."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sources.x.client import XClient, XRetrySettings, new_http_client
from crawl_assets_tests.sources.feedback_helpers import LakeStore as RawLakeStore
from crawl_assets_tests.standins.x_api import XAPIServer
from crawl_assets_tests.standins.x_corpus import Corpus, build_corpus

FAST = XRetrySettings(max_retries=2, backoff_seconds=0.01, backoff_cap_seconds=0.05, max_inline_wait_seconds=5.0,
                     reset_margin_seconds=0.05, full_archive_interval_seconds=0.0)


@pytest.fixture
def corpus() -> Corpus:
    return build_corpus(800, days=10)


@pytest.fixture
def server(corpus):
    with XAPIServer(corpus, timeout_sleep=1.0) as srv:
        yield srv


@pytest.fixture
def make_client(server):
    made: list[XClient] = []

    def make(settings: XRetrySettings = FAST, token: str = "test-token", timeout: float = 5.0, **kwargs) -> XClient:
        client = XClient(new_http_client(server.url, token, timeout_seconds=timeout), settings, **kwargs)
        made.append(client)
        return client

    yield make
    for client in made:
        client.http.close()


@dataclass
class LakeStore(RawLakeStore):
    """The shared ``store`` callback (a raw batch in a real lake, then the state) for ``x-v2`` pages."""

    fmt: str = "x-v2"

    def pages(self) -> list[dict[str, Any]]:
        return [orjson.loads(line) for line in self.lines()]

    def post_ids(self, phase: str | None = None) -> list[str]:
        """Ids of ``data`` posts in stored order (duplicates kept, so tests can count them)."""
        ids = []
        for batch in self.lake.raw_batches(self.entry.tenant, "x", self.entry.key):
            if phase and batch.manifest.extra.get("phase") != phase:
                continue
            with self.lake.open_raw(batch) as fh:
                for line in fh:
                    ids += [t["id"] for t in orjson.loads(line).get("data", [])]
        return ids


@pytest.fixture
def lake(tmp_path) -> Lake:
    return Lake(str(tmp_path / "lake"))


def timeline(name: str = "tl", identifier: str = "data_eng", **options: Any) -> SourceEntry:
    return SourceEntry(name=name, tenant="acme", platform="x", kind="account_timeline", identifier=identifier,
                       options=options)


def search(name: str = "sq", query: str = "python", horizon: int | None = None, **options: Any) -> SourceEntry:
    policy = {"history_horizon_days": horizon} if horizon else {}
    return SourceEntry(name=name, tenant="acme", platform="x", kind="search_query", identifier=query,
                       policy=policy, options=options)


def expected_timeline(corpus: Corpus, username: str) -> list[str]:
    user = corpus.user_by_name(username)
    return [t["id"] for t in corpus.visible() if t["author_id"] == user["id"]]
