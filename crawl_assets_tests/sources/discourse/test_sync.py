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
from crawl_assets.sdk.sync import Budget
from crawl_assets.sdk.errors import PermanentError, TransientError
from crawl_assets.sdk.http import RetrySettings
from crawl_assets_tests.normalize.shapes import discourse_quote
from crawl_assets_tests.sources.feedback_helpers import LakeStore, errors, normalize_batches
from crawl_assets_tests.standins.discourse_api import DiscourseServer, build_forum

FAST = RetrySettings(max_retries=2, backoff_seconds=0.01, backoff_cap_seconds=0.05, max_inline_wait_seconds=5.0)
FORUM = "https://forum.example.org"


def _entry(options=None, **policy):
    return SourceEntry(name="forum", tenant="acme", platform="discourse", kind="forum", identifier=FORUM,
                       policy=policy or {}, options={"pages_per_batch": 2, **(options or {})})


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
    # nothing re-fetched: the page's 49 older posts were stored by the first sync, so they are context
    # (their numbers teach the normalizer ids), not records again, and their reply targets are not fetched
    assert server.counts() == {"categories": 1, "posts": 1, "topic": 1}
    assert second.stats.extra["reply_parents_fetched"] == 0
    records, _ = normalize_batches(store.lake, store.entry, normalize_discourse)
    latest = next(r for r in records if int(r.native_id) == new["id"])
    assert latest.reply_to == f"discourse:forum.example.org:{forum.topics[1003]['posts'][1]}"
    last_batch = [r for r in records if r.provenance.raw_pointer == store.batches[-1].path]
    assert all(r.reply_to for r in last_batch if r.kind != "post")
    with store.lake.open_raw(store.batches[-1]) as fh:
        [page_line] = [n for n, line in enumerate(fh, start=1) if b'"latest_posts"' in line]
    from_page = [int(r.native_id) for r in last_batch if r.provenance.raw_line == page_line]
    assert from_page == [new["id"]], "the page's older posts are not emitted again"


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


# Reply targets a batch lacks. One 80-post thread (post n has id n; 75 replies to 25, 25 to 22, the rest
# to the first post): a first sync stores it whole in one batch; the next sync's batch is the topic answer
# (posts 1-20) and the latest page (the 50 newest), so posts 21-31 are in no line of it.
THREAD = 3000
REPLIES = {75: 25, 25: 22}


@pytest.fixture
def thread():
    forum = build_forum(topics=0)
    forum.add_topic(THREAD, "Long thread", category_id=9, tags=["sync"])
    start = datetime.now(timezone.utc) - timedelta(days=2)
    for n in range(80):
        forum.add_post(THREAD, start + timedelta(minutes=n), f"<p>post {n + 1}</p>", reply_to_number=REPLIES.get(n + 1))
    return forum


def _latest_records(store):
    """The records as the pipeline stores them (normalize_batch per raw batch), latest observation per key."""
    from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
    from crawl_assets.lake.tables import arrow_to_records

    lake, entry = store.lake, store.entry
    for batch in lake.raw_batches(entry.tenant, entry.platform, entry.key):
        part = lake.table_part(TABLE, entry.tenant, entry.platform, entry.key, batch.manifest.batch_id)
        assert not [r for r in normalize_batch(lake, batch, part).rejected if r["error"]]
    latest = {}
    for _, table in lake.read_parts(TABLE, entry.tenant, entry.platform, entry.key):
        latest.update((r["key"], r) for r in arrow_to_records(table))
    return latest


def _key(post_id):
    return f"discourse:forum.example.org:{post_id}"


@pytest.fixture
def thread_run(thread, tmp_path):
    """(stand-in serving the thread, a client of it, tmp_path)."""
    with DiscourseServer(forum=thread) as srv:
        c = new_client(FORUM, FAST, base_url=srv.url)
        yield srv, c, tmp_path
        c.http.close()


def _first_sync(srv, c, tmp_path, **options):
    entry = _entry(options)
    store = LakeStore(Lake(str(tmp_path / "lake")), entry, "discourse")
    first = sync_forum(c, entry, {}, store, Budget())
    assert first.stats.complete and first.stats.extra.get("reply_parents_fetched", 0) == 0
    srv.log.clear()
    return store, first


def test_a_reply_to_a_post_stored_by_an_earlier_sync_gets_its_key(thread, thread_run):
    srv, c, tmp_path = thread_run
    store, first = _first_sync(srv, c, tmp_path)
    new = thread.add_post(THREAD, datetime.now(timezone.utc), "<p>back to the 25th</p>", reply_to_number=25)
    second = sync_forum(c, store.entry, first.state, store, Budget())
    assert second.stats.complete
    assert srv.counts()["post_by_number"] == 1 and second.stats.extra["reply_parents_fetched"] == 1
    assert [e.path for e in srv.log if e.endpoint == "post_by_number"] == [f"/posts/by_number/{THREAD}/25.json"]
    latest = _latest_records(store)
    reply = latest[_key(new["id"])]
    assert reply["reply_to"] == _key(25) and reply["kind"] == "reply"
    # the target's answer only taught number -> id: its record from the first sync, whose own target (22)
    # was resolved there, stays the latest observation
    assert latest[_key(25)]["reply_to"] == _key(22) and latest[_key(25)]["metadata"]["tags"] == ["sync"]


def test_a_target_elsewhere_in_the_same_batch_costs_no_request(thread, thread_run):
    """Post 75 replies to 25: on the second latest page, a later line of the same batch than post 75."""
    srv, c, tmp_path = thread_run
    store, first = _first_sync(srv, c, tmp_path)
    assert len(store.batches) == 1 and srv.counts().get("post_by_number", 0) == 0
    latest = _latest_records(store)
    assert {i: latest[_key(i)]["reply_to"] for i in REPLIES} == {i: _key(t) for i, t in REPLIES.items()}
    assert all(latest[_key(i)]["reply_to"] == _key(1) for i in range(2, 81) if i not in REPLIES)


def test_a_deleted_target_is_counted_missing_and_the_reply_keeps_its_number(thread, thread_run):
    srv, c, tmp_path = thread_run
    store, first = _first_sync(srv, c, tmp_path)
    thread.delete_post(25)
    new = thread.add_post(THREAD, datetime.now(timezone.utc), "<p>what was deleted?</p>", reply_to_number=25)
    second = sync_forum(c, store.entry, first.state, store, Budget())
    assert second.stats.complete and second.state["newest_id"] == new["id"]
    assert [e.status for e in srv.log if e.endpoint == "post_by_number"] == [404]
    assert second.stats.extra["reply_parents_missing"] == 1 and second.stats.extra["reply_parents_fetched"] == 0
    reply = _latest_records(store)[_key(new["id"])]
    assert reply["reply_to"] is None and reply["metadata"]["reply_to_post_number"] == 25


def test_target_fetches_stay_within_max_parent_fetches_and_the_budget(thread, thread_run):
    srv, c, tmp_path = thread_run
    store, first = _first_sync(srv, c, tmp_path, max_parent_fetches=2)
    now = datetime.now(timezone.utc)
    new = [thread.add_post(THREAD, now, f"<p>re {n}</p>", reply_to_number=n) for n in (21, 22, 23, 24)]
    second = sync_forum(c, store.entry, first.state, store, Budget())
    assert srv.counts()["post_by_number"] == 2
    # four targets lack (21-24); the page's older posts were stored before, their targets are not fetched
    assert second.stats.extra["reply_parents_fetched"] == 2 and second.stats.extra["reply_parents_skipped"] == 2
    latest = _latest_records(store)
    assert sum(latest[_key(p["id"])]["reply_to"] is not None for p in new) == 2

    srv.log.clear()
    late = thread.add_post(THREAD, datetime.now(timezone.utc), "<p>re 26</p>", reply_to_number=26)
    so_far = sum(c.stats.requests.values())  # the budget counts the client's requests
    third = sync_forum(c, store.entry, second.state, store, Budget(max_requests=so_far + 3))  # categories, posts, topic
    assert third.state["newest_id"] == late["id"] and "post_by_number" not in srv.counts()
    assert third.stats.extra["reply_parents_skipped"] >= 1


def test_a_failed_target_fetch_stores_nothing_and_the_rerun_resolves(thread, thread_run):
    """The checkpoint moves only with its batch: a target fetch failing ends the run before the store."""
    srv, c, tmp_path = thread_run
    store, first = _first_sync(srv, c, tmp_path)
    batches, states = len(store.batches), len(store.states)
    new = thread.add_post(THREAD, datetime.now(timezone.utc), "<p>re 30</p>", reply_to_number=30)
    srv.inject("500", "post_by_number", times=10)
    with pytest.raises(TransientError):
        sync_forum(c, store.entry, first.state, store, Budget())
    assert (len(store.batches), len(store.states)) == (batches, states)
    srv.faults.clear()
    again = sync_forum(c, store.entry, store.state, store, Budget())
    assert again.state["newest_id"] == new["id"]
    assert _latest_records(store)[_key(new["id"])]["reply_to"] == _key(30)


def test_a_quoted_post_stored_by_an_earlier_sync_is_fetched_and_linked(thread, thread_run):
    """Issue 29 item 4: a quote names its post by topic and number, like a reply target: fetched when missing."""
    srv, c, tmp_path = thread_run
    store, first = _first_sync(srv, c, tmp_path)
    new = thread.add_post(THREAD, datetime.now(timezone.utc),
                          discourse_quote("alice", THREAD, 30, "post 30") + "<p>as said above</p>", reply_to_number=31)
    second = sync_forum(c, store.entry, first.state, store, Budget())
    assert sorted(e.path for e in srv.log if e.endpoint == "post_by_number") == [
        f"/posts/by_number/{THREAD}/30.json", f"/posts/by_number/{THREAD}/31.json"]
    assert second.stats.extra["reply_parents_fetched"] == 2
    quoting = _latest_records(store)[_key(new["id"])]
    assert quoting["quote_of"] == _key(30) and quoting["text"] == "as said above"
