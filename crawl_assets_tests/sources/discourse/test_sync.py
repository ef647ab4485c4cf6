"""Discourse sync against the stand-in: the walk by post id, complete topics, categories/tags, replies,
incremental runs, resume, and the errors of a real forum (private, rate limited, deleted topic)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sources.discourse.client import new_client
from crawl_assets.sources.discourse.normalize import normalize_discourse
from crawl_assets.sources.discourse.sync import sync_forum
from crawl_assets.sources.pull import Budget
from crawl_assets.sources.rest import PermanentError, RetrySettings
from crawl_assets_tests.sources.feedback_helpers import LakeStore, errors, normalize_batches
from crawl_assets_tests.standins.discourse_api import DiscourseServer, build_forum

FAST = RetrySettings(max_retries=2, backoff_seconds=0.01, backoff_cap_seconds=0.05, max_inline_wait_seconds=5.0)
FORUM = "https://forum.example.org"


def _entry(**policy):
    return SourceEntry(name="forum", tenant="acme", platform="discourse", kind="forum", identifier=FORUM,
                       policy=policy or {}, options={"pages_per_batch": 2})


@pytest.fixture
def forum():
    return build_forum(topics=6, replies=30)


@pytest.fixture
def server(forum):
    with DiscourseServer(forum=forum) as srv:
        yield srv


@pytest.fixture
def client(server):
    c = new_client(FORUM, FAST, base_url=server.url)
    yield c
    c.http.close()


@pytest.fixture
def store(tmp_path):
    return LakeStore(Lake(str(tmp_path / "lake")), _entry(), "discourse")


def _posts(forum, post_type=1):
    return {pid for pid, p in forum.posts.items() if p["post_type"] == post_type}


def test_full_walk_stores_every_post_with_topic_metadata_and_resolved_replies(client, server, forum, store):
    result = sync_forum(client, store.entry, {}, store, Budget())
    assert result.stats.complete and result.state["newest_id"] == max(forum.posts)
    assert server.counts()["topic"] == 6  # each topic once per run, however many pages touch it
    records, rejections = normalize_batches(store.lake, store.entry, normalize_discourse)
    assert not errors(rejections)
    by_id = {int(r.native_id): r for r in records}
    assert set(by_id) == _posts(forum)
    assert {r.reason.split(": ")[1] for r in rejections} == {"small action"}
    reply = next(r for r in records if r.metadata.get("reply_to_post_number") and r.reply_to)
    topic = forum.topics[reply.metadata["topic_id"]]
    target_number = reply.metadata["reply_to_post_number"]
    assert reply.reply_to == f"discourse:forum.example.org:{topic['posts'][target_number - 1]}"
    persian = next(r for r in records if r.author_handle == "sara")
    assert persian.lang == "fa" and persian.mentions == ["bob"] and persian.kind == "reply"
    assert persian.metadata["tags"] and persian.metadata["category_name"] in ("Android", "پشتیبانی")
    assert persian.conversation_id == f"discourse:forum.example.org:topic:{persian.metadata['topic_id']}"
    assert all(r.key.startswith("discourse:forum.example.org:") for r in records)


def test_a_new_reply_in_an_old_topic_brings_the_whole_topic(server, forum, tmp_path):
    """First sync with a 1-day horizon: a 45-post topic from last week is outside it. A new reply there
    must bring the topic complete (fetched by id in chunks of 20), not just the new post."""
    old = datetime.now(timezone.utc) - timedelta(days=8)
    forum.add_topic(2000, "Old thread", category_id=6, tags=["legacy"])
    for n in range(45):
        forum.add_post(2000, old + timedelta(minutes=n), f"<p>old post {n}</p>", reply_to_number=n or None)
    forum.add_post(2000, datetime.now(timezone.utc), "<p>and now a new one</p>", reply_to_number=45)
    entry = _entry(history_horizon_days=1)
    store = LakeStore(Lake(str(tmp_path / "lake2")), entry, "discourse")
    client = new_client(FORUM, FAST, base_url=server.url)
    result = sync_forum(client, entry, {}, store, Budget())
    client.http.close()
    chunks = [e for e in server.log if e.endpoint == "topic_posts" and "/t/2000/" in e.path]
    # 46 posts: 20 on the topic page, the new one on the latest-posts page, 25 by id
    assert [len(e.query["post_ids[]"]) for e in chunks] == [20, 5]
    records, _ = normalize_batches(store.lake, entry, normalize_discourse)
    assert {int(r.native_id) for r in records if r.metadata.get("topic_id") == 2000} == set(forum.topics[2000]["posts"])
    assert result.stats.extra["topic_posts_fetched"] == 25


def test_incremental_run_asks_one_page_and_remembers_complete_topics(client, server, forum, store):
    first = sync_forum(client, store.entry, {}, store, Budget())
    server.log.clear()
    new = forum.add_post(1003, datetime.now(timezone.utc), "<p>still happening on 2.4</p>", reply_to_number=2)
    second = sync_forum(client, store.entry, first.state, store, Budget())
    assert second.state["newest_id"] == new["id"] and second.stats.new == 1
    assert server.counts() == {"categories": 1, "posts": 1, "topic": 1}  # nothing re-fetched by id
    records, _ = normalize_batches(store.lake, store.entry, normalize_discourse)
    latest = next(r for r in records if int(r.native_id) == new["id"])
    assert latest.reply_to == f"discourse:forum.example.org:{forum.topics[1003]['posts'][1]}"


def test_a_stopped_walk_resumes_below_its_last_page(client, server, forum, store):
    partial = sync_forum(client, store.entry, {}, store, Budget(max_requests=4))
    assert not partial.stats.complete and partial.state["walk"]["before"]
    done = sync_forum(client, store.entry, store.state, store, Budget())
    assert done.stats.complete and done.state["newest_id"] == max(forum.posts)
    records, _ = normalize_batches(store.lake, store.entry, normalize_discourse)
    assert {int(r.native_id) for r in records} == _posts(forum)


def test_rate_limit_with_retry_after_is_waited_out(client, server, store):
    server.inject("429", "posts", headers={"Retry-After": "0"},
                  body={"errors": ["You’ve performed this action too many times."], "error_type": "rate_limit",
                        "extras": {"wait_seconds": 0}})
    result = sync_forum(client, store.entry, {}, store, Budget())
    assert result.stats.complete and client.stats.throttled == 1


def test_a_deleted_topic_is_skipped_not_fatal(client, server, forum, store):
    server.inject("404", "topic", body={"errors": ["The requested URL or resource could not be found."],
                                        "error_type": "not_found"})
    result = sync_forum(client, store.entry, {}, store, Budget())
    assert result.stats.complete and result.stats.extra["topics_unavailable"] == 1


def test_private_forum_without_key_is_permanent(forum, store):
    with DiscourseServer(forum=forum, api_keys={"k1"}) as srv:
        anonymous = new_client(FORUM, FAST, base_url=srv.url)
        with pytest.raises(PermanentError, match="403 You are not permitted"):
            sync_forum(anonymous, store.entry, {}, store, Budget())
        keyed = new_client(FORUM, FAST, base_url=srv.url, api_key="k1", api_username="crawler")
        assert sync_forum(keyed, store.entry, {}, store, Budget()).stats.complete
        for c in (anonymous, keyed):
            c.http.close()
