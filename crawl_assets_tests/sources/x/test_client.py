"""The X client's waiting and error sorting, measured by the stand-in's request log (never by timing)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from crawl_assets.sdk.errors import PermanentError, RateLimitWait, TransientError
from crawl_assets.sdk.sync import Budget
from crawl_assets.sources.x.sync import sync_source
from crawl_assets_tests.sources.x.conftest import FAST, LakeStore, expected_timeline, search, timeline


def test_pacing_from_headers_avoids_429(server, corpus, make_client, lake):
    server.set_limit("users/tweets", 3, 1.0)  # 3 requests per 1-second window
    entry = timeline(max_results=25)
    store = LakeStore(lake, entry)
    client = make_client()
    sync_source(client, entry, {}, store, Budget())
    assert server.counts()["users/tweets"] > 3, "more pages than one window allows"
    assert server.statuses()[429] == 0, "the client waited for the reset instead of hitting the limit"
    assert client.stats.throttled == 0 and client.stats.rate_limit_wait_seconds > 0
    assert store.post_ids() == expected_timeline(corpus, "data_eng")


def test_429_waits_for_the_reset_in_place(server, corpus, make_client, lake):
    server.set_limit("users/tweets", 1000, 1.5)
    server.inject("429", "users/tweets", after=2)
    entry = timeline(max_results=25)
    store = LakeStore(lake, entry)
    client = make_client()
    sync_source(client, entry, {}, store, Budget())
    statuses = [r.status for r in server.log if r.endpoint == "users/tweets"]
    assert statuses[2] == 429 and statuses[3] == 200, "asked again after the reset"
    assert client.stats.throttled == 1
    assert store.post_ids() == expected_timeline(corpus, "data_eng")


def test_long_reset_ends_the_run_after_storing_what_it_has(server, make_client, lake):
    server.set_limit("users/tweets", 2, 120.0)  # the window resets in two minutes: too long to sleep
    entry = timeline(max_results=20, pages_per_batch=10)
    store = LakeStore(lake, entry)
    with pytest.raises(RateLimitWait) as caught:
        sync_source(make_client(), entry, {}, store, Budget())
    assert 60 < caught.value.seconds <= 122
    assert server.statuses()[429] == 0, "the budget was read from headers; no 429 was provoked"
    assert len(store.post_ids()) == 40 and store.state["pass"]["token"], "two pages stored, resumable"


def test_server_errors_timeouts_and_broken_pages_are_retried(server, corpus, make_client, lake):
    server.inject("503", "users/tweets", times=1)
    server.inject("timeout", "users/tweets", times=1, after=1)
    server.inject("malformed", "users/tweets", times=1, after=2)
    entry = timeline()
    store = LakeStore(lake, entry)
    client = make_client(replace(FAST, max_retries=3), timeout=0.3)
    sync_source(client, entry, {}, store, Budget())
    assert client.stats.retries == 3
    assert store.post_ids() == expected_timeline(corpus, "data_eng"), "the malformed body was not stored"


def test_retries_are_bounded(server, make_client, lake):
    server.inject("500", "search/recent", times=10)
    entry = search()
    with pytest.raises(TransientError, match="HTTP 500 after 3 attempts"):
        sync_source(make_client(), entry, {}, LakeStore(lake, entry), Budget())
    assert server.counts()["search/recent"] == 3


def test_auth_and_access_errors_are_permanent(server, make_client, lake):
    entry = search()
    with pytest.raises(PermanentError, match="401"):
        sync_source(make_client(token="revoked"), entry, {}, LakeStore(lake, entry), Budget())
    assert server.counts()["search/recent"] == 1, "a revoked token is not retried"
    server.full_archive_tokens.clear()
    archive = search(name="arch", endpoint="all")
    with pytest.raises(PermanentError, match="client-not-enrolled"):
        sync_source(make_client(), archive, {}, LakeStore(lake, archive), Budget())
