"""Hacker News (the fourth source, added by docs/ADDING_A_SOURCE.md): the walk past Algolia's 1,000-hit
cap, incremental runs, resume, and normalization of stories and comment threads."""

from __future__ import annotations

import time

import pytest

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sources.hackernews.client import new_client
from crawl_assets.sources.hackernews.normalize import normalize_hackernews
from crawl_assets.sources.hackernews.sync import sync_search
from crawl_assets.sdk.sync import Budget
from crawl_assets.sdk.http import RetrySettings
from crawl_assets_tests.sources.feedback_helpers import LakeStore, normalize_batches
from crawl_assets_tests.sources.hackernews.standin import HackerNewsServer, make_items
from crawl_assets_tests.sources.options_helpers import refusal

FAST = RetrySettings(max_retries=2, backoff_seconds=0.01, backoff_cap_seconds=0.05)


@pytest.fixture
def items():
    return make_items(40, 30)  # 1,240 items: more than one Algolia query can page through


@pytest.fixture
def server(items):
    with HackerNewsServer(items=items) as srv:
        yield srv


@pytest.fixture
def client(server):
    c = new_client(server.url, FAST)
    yield c
    c.http.close()


@pytest.fixture
def store(tmp_path):
    e = SourceEntry(name="feedback", tenant="acme", platform="hackernews", kind="search_query",
                    identifier="feedback tool", options={"hits_per_page": 100})
    return LakeStore(Lake(str(tmp_path / "lake")), e, "hackernews")


def test_walks_past_the_hit_cap_and_normalizes_threads(client, server, items, store):
    result = sync_search(client, store.entry, {}, store, Budget())
    assert result.stats.complete and result.state["newest_at"] == items[-1]["created_at_i"] - 1
    windows = {e.query.get("numericFilters", [""])[0] for e in server.log}
    assert len(windows) == 2  # the second window starts below the oldest item of the first
    records, rejections = normalize_batches(store.lake, store.entry, normalize_hackernews)
    assert not rejections and {r.native_id for r in records} == {i["objectID"] for i in items}
    comment = next(r for r in records if r.kind == "comment")
    source = next(i for i in items if i["objectID"] == comment.native_id)
    assert comment.reply_to == f"hackernews:{source['parent_id']}"
    assert comment.conversation_id == f"hackernews:{source['story_id']}" and comment.urls
    story = next(r for r in records if r.kind == "post")
    assert story.metrics.likes is not None and story.metadata["hn_url"].endswith(story.native_id)


def test_incremental_and_resumed_runs(client, server, items, store):
    partial = sync_search(client, store.entry, {}, store, Budget(max_requests=3))
    assert not partial.stats.complete and partial.state["walk"]["page"] == 3
    done = sync_search(client, store.entry, store.state, store, Budget())
    assert done.stats.complete
    server.log.clear()
    now = int(time.time())
    items.append({**items[-1], "objectID": "49999999", "created_at_i": now,
                  "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))})
    again = sync_search(client, store.entry, done.state, store, Budget())
    assert len(server.log) == 1 and again.stats.fetched == 2  # the new item + the cursor's own second


def test_options_are_typed_and_read_as_before():
    entry = SourceEntry(name="q", tenant="acme", platform="hackernews", kind="search_query", identifier="q",
                        options={"hits_per_page": 5000, "pages_per_batch": 0, "tags": ""})
    options = entry.typed_options
    assert (options.hits_per_page, options.pages_per_batch, options.tags) == (1000, 5, "(story,comment)")
    assert SourceEntry(name="q", platform="hackernews", kind="search_query", identifier="q").typed_options.hits_per_page == 100
    assert refusal("hackernews", "search_query", "q", hits_per_page="many") == \
        ("options.hits_per_page", "must be a whole number, not 'many'")
    assert refusal("hackernews", "search_query", "q", hit_per_page=5) == ("options.hit_per_page", "unknown option "
                                                                        "'hit_per_page' for hackernews search_query "
                                                                        "sources; known: tags, hits_per_page, pages_per_batch")
