"""Intercom sync against the stand-in: search paging, incremental cursor, resume, throttling, errors."""

from __future__ import annotations

import time

import pytest

from crawl_assets.sources.intercom.client import new_client
from crawl_assets.sources.intercom.normalize import normalize_intercom
from crawl_assets.sources.intercom.sync import sync_workspace
from crawl_assets.sdk.sync import Budget
from crawl_assets.sdk.errors import PermanentError, RateLimitWait
from crawl_assets.sdk.http import RetrySettings
from crawl_assets_tests.sources.feedback_helpers import errors, normalize_batches
from crawl_assets_tests.sources.intercom.conftest import FAST


def _parts(conv):
    return 1 + sum(1 for p in conv["conversation_parts"]["conversation_parts"] if p["body"])


def test_full_sync_pages_with_starting_after_and_stores_every_part(client, server, entry, store, conversations):
    result = sync_workspace(client, entry, {}, store, Budget())
    assert result.stats.complete and "pass" not in result.state
    assert server.counts() == {"search": 5, "conversation": 30}  # 30 hits, 7 per page
    records, rejections = normalize_batches(store.lake, entry, normalize_intercom)
    assert not errors(rejections)
    assert len(records) == sum(_parts(c) for c in conversations)
    assert len({r.key for r in records}) == len(records)
    assert {r.reply_to for r in records if r.kind == "comment"} <= {r.key for r in records if r.kind == "message"}
    assert {r.author_id.split(":")[0] for r in records} == {"user", "admin"}
    assert all("@" not in (r.author_handle or "") for r in records)  # emails never copied
    assert [r.reason for r in rejections][:1] == ["conversation 1 part 199: assignment without a body"]


def test_incremental_sync_fetches_only_updated_conversations(client, server, entry, store, conversations):
    first = sync_workspace(client, entry, {}, store, Budget())
    server.log.clear()
    conv = conversations[4]
    conv["updated_at"] = int(time.time())
    conv["conversation_parts"]["conversation_parts"].append({
        "type": "conversation_part", "id": "999001", "part_type": "comment", "body": "<p>fixed in 2.4</p>",
        "created_at": conv["updated_at"], "updated_at": conv["updated_at"], "attachments": [], "redacted": False,
        "author": {"type": "admin", "id": "991", "name": "Sara"}})
    second = sync_workspace(client, entry, first.state, store, Budget())
    assert server.counts() == {"search": 1, "conversation": 1}
    assert second.stats.updated == 1 and second.stats.new == 0
    assert second.state["updated_after"] == min(conv["updated_at"], second.state["updated_after"])
    records, _ = normalize_batches(store.lake, entry, normalize_intercom)
    assert "intercom:wsa:5:999001" in {r.key for r in records}
    server.log.clear()
    third = sync_workspace(client, entry, second.state, store, Budget())
    assert server.counts()["conversation"] <= 1 and third.stats.complete  # only the overlap window is re-read


def test_stopped_sync_resumes_from_its_checkpoint_without_losing_a_conversation(client, server, entry, store):
    partial = sync_workspace(client, entry, {}, store, Budget(max_requests=12))
    assert not partial.stats.complete and partial.state["pass"]["starting_after"]
    assert store.state == partial.state  # the saved checkpoint is the returned one
    done = sync_workspace(client, entry, store.state, store, Budget())
    assert done.stats.complete
    fetched = {e.path for e in server.log if e.endpoint == "conversation"}
    assert len(fetched) == 30


def test_throttles_before_the_window_is_spent(conversations, entry, store):
    with pytest.MonkeyPatch.context():
        from crawl_assets_tests.standins.intercom_api import IntercomServer

        with IntercomServer(workspaces={"t": ("wsa", conversations[:6])}, rate_limit=4, window_seconds=1.0) as srv:
            client = new_client(srv.url, "t", FAST, low_watermark=1)
            result = sync_workspace(client, entry, {}, store, Budget())
            client.http.close()
    assert result.stats.complete
    assert all(e.status == 200 for e in srv.log)  # never ran into a 429
    assert client.stats.rate_limit_wait_seconds > 0 and client.stats.throttled == 0


def test_long_reset_ends_the_step_instead_of_sleeping(server, entry, store):
    server.inject("429", "search", headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(time.time()) + 600)},
                  body={"type": "error.list", "errors": [{"code": "rate_limit_exceeded", "message": "Exceeded rate limit"}]})
    client = new_client(server.url, "tok-a", RetrySettings(max_inline_wait_seconds=5.0))
    with pytest.raises(RateLimitWait) as info:
        sync_workspace(client, entry, {}, store, Budget())
    client.http.close()
    assert 590 < info.value.seconds <= 601


def test_server_errors_and_dropped_connections_are_retried(client, server, entry, store):
    server.inject("500", "search", times=2)
    server.inject("drop", "conversation")
    server.inject("malformed", "conversation")
    result = sync_workspace(client, entry, {}, store, Budget())
    assert result.stats.complete and client.stats.retries == 4


def test_revoked_token_is_permanent_and_names_no_secret(server, entry, store):
    client = new_client(server.url, "tok-revoked", FAST)
    with pytest.raises(PermanentError) as info:
        sync_workspace(client, entry, {}, store, Budget())
    client.http.close()
    assert "401" in str(info.value) and "Access Token Invalid" in str(info.value)
    assert "tok-revoked" not in str(info.value)


def test_a_conversation_deleted_after_the_search_is_skipped(client, server, entry, store):
    server.inject("404", "conversation", body={"type": "error.list", "errors": [{"code": "not_found", "message": "Resource Not Found"}]})
    result = sync_workspace(client, entry, {}, store, Budget())
    assert result.stats.complete and result.stats.extra["conversations_gone"] == 1 and result.stats.new == 29
