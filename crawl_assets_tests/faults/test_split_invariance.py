"""The data a sync collects must not depend on how it was split across runs (budgets, crashes, retries):
otherwise no recovery can ever equal a clean run."""

from __future__ import annotations

import orjson
import pytest

from crawl_assets.lake import Lake
from crawl_assets.sdk.sync import Budget
from crawl_assets.sources.x.sync import sync_source
from crawl_assets.sources.x.threads import LakeThreadMemory
from crawl_assets_tests.sources.x.conftest import LakeStore, timeline
from crawl_assets_tests.standins.x_api import XAPIServer
from crawl_assets_tests.standins.x_corpus import build_corpus


def _data_ids(store: LakeStore) -> set[str]:
    """Ids of posts stored as ``data`` (the ones that become records)."""
    ids: set[str] = set()
    for batch in store.lake.raw_batches(store.entry.tenant, "x", store.entry.key):
        with store.lake.open_raw(batch) as fh:
            for line in fh:
                data = orjson.loads(line).get("data") or []
                ids |= {t["id"] for t in (data if isinstance(data, list) else [data])}
    return ids


def _sync(server_url: str, lake: Lake, max_pages: int | None) -> set[str]:
    from crawl_assets_tests.sources.x.conftest import FAST
    from crawl_assets.sources.x.client import XClient, new_http_client

    entry = timeline(complete_threads=True, max_results=20, pages_per_batch=1)
    store = LakeStore(lake, entry)
    memory = LakeThreadMemory(lake, entry.tenant, "x", entry.key)
    client = XClient(new_http_client(server_url, "test-token"), FAST)
    try:
        for _ in range(200):
            result = sync_source(client, entry, store.state, store, Budget(max_pages=max_pages), memory=memory)
            if result.stats.complete and not memory.load()[1]:
                break
    finally:
        client.http.close()
    return _data_ids(store)


def test_x_thread_completion_does_not_depend_on_run_splits(tmp_path):
    with XAPIServer(build_corpus(1200, days=20)) as server:
        whole = _sync(server.url, Lake(str(tmp_path / "whole")), None)
        split = _sync(server.url, Lake(str(tmp_path / "split")), 2)
    assert split == whole, f"{len(split - whole)} posts only in the split sync, {len(whole - split)} only in the whole"
