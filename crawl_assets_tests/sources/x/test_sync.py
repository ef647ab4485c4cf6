"""The X sync engine against the v2 stand-in: cursors, resumption, backfill windows, threads, the raw contract."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crawl_assets.lake import Lake
from crawl_assets.sources.x.client import XClient, new_http_client
from crawl_assets.sdk.errors import PermanentError, TransientError
from crawl_assets.sources.x.fields import EXPANSIONS, TWEET_FIELDS
from crawl_assets.sdk.sync import Budget
from crawl_assets.sources.x.sync import sync_source
from crawl_assets.sources.x.threads import LakeThreadMemory
from crawl_assets_tests.sources.x.conftest import FAST, LakeStore, expected_timeline, search, timeline
from crawl_assets_tests.standins.x_api import XAPIServer
from crawl_assets_tests.standins.x_corpus import build_corpus


def ok_params(server, endpoint):
    return [r.params for r in server.log if r.endpoint == endpoint and r.status == 200]


def test_first_sync_stores_every_page_as_received(server, corpus, make_client, lake):
    entry = timeline()
    store = LakeStore(lake, entry)
    result = sync_source(make_client(), entry, {}, store, Budget())

    want = expected_timeline(corpus, "data_eng")
    assert store.post_ids() == want, "every post once, newest first, nothing missing"
    pages = -(-len(want) // 100)
    assert server.counts() == {"users/by/username": 1, "users/tweets": pages}
    assert result.stats.complete and result.state["newest_id"] == want[0]
    assert result.state["user"]["id"] == corpus.user_by_name("data_eng")["id"]

    first = ok_params(server, "users/tweets")[0]
    assert set(first["expansions"].split(",")) >= set(EXPANSIONS)
    assert {"note_tweet", "edit_history_tweet_ids", "conversation_id", "public_metrics"} <= set(first["tweet.fields"].split(","))
    assert set(first["tweet.fields"].split(",")) == set(TWEET_FIELDS)
    # byte-for-byte: the stored line is the body the server sent for that request
    again = httpx.get(f"{server.url}/2/users/{result.state['user']['id']}/tweets", params=first,
                      headers={"Authorization": "Bearer test-token"})
    with lake.open_raw(store.batches[0]) as fh:
        assert fh.readline().rstrip(b"\n") == again.content


def test_incremental_with_nothing_new_costs_one_request(server, make_client, lake):
    entry = timeline()
    store = LakeStore(lake, entry)
    client = make_client()
    sync_source(client, entry, {}, store, Budget())
    batches = len(store.batches)
    server.clear_log()

    result = sync_source(client, entry, store.state, store, Budget())
    assert server.counts() == {"users/tweets": 1}, "username cached, one since_id request"
    assert ok_params(server, "users/tweets")[0]["since_id"] == result.state["newest_id"]
    assert len(store.batches) == batches, "an empty page is not stored"


def test_incremental_fetches_exactly_the_new_posts(server, corpus, make_client, lake):
    entry = timeline()
    store = LakeStore(lake, entry)
    client = make_client()
    sync_source(client, entry, {}, store, Budget())
    before = store.post_ids()
    new = [t["id"] for t in corpus.grow(corpus.user_by_name("data_eng"), 7)]
    server.clear_log()

    result = sync_source(client, entry, store.state, store, Budget())
    after = store.post_ids()
    assert after[len(before):] == new[::-1]
    assert len(after) == len(set(after))
    assert server.counts() == {"users/tweets": 1}
    assert result.state["newest_id"] == new[-1]


def test_interrupted_mid_pagination_resumes_without_gaps_or_refetch(server, corpus, make_client, lake):
    entry = timeline(max_results=20, pages_per_batch=3)
    store = LakeStore(lake, entry)
    client = make_client()
    # after 5 good pages the connection drops on every attempt: the client's retries run out
    server.inject("drop", "users/tweets", times=3, after=5)
    with pytest.raises(TransientError):
        sync_source(client, entry, {}, store, Budget())
    interrupted = store.state
    assert interrupted["pass"]["token"], "the checkpoint holds the next token"
    assert len(store.post_ids()) == 5 * 20, "pages fetched before the failure were stored, not dropped"

    result = sync_source(client, entry, interrupted, store, Budget())
    assert result.stats.complete
    assert store.post_ids() == expected_timeline(corpus, "data_eng"), "no gap, no duplicate"
    tokens = [p.get("pagination_token") for p in ok_params(server, "users/tweets")]
    assert len(tokens) == len(set(tokens)), "no page fetched twice"
    assert server.statuses()[0] == 3


def test_budget_stops_a_run_and_the_next_continues(server, corpus, make_client, lake):
    entry = search(query="python", horizon=5, max_results=10, pages_per_batch=2, backfill_window_hours=48)
    store = LakeStore(lake, entry)
    client = make_client()
    first = sync_source(client, entry, {}, store, Budget(max_pages=4))
    assert not first.stats.complete and first.stats.pages == 4
    second = sync_source(client, entry, first.state, store, Budget(max_pages=3))
    third = sync_source(client, entry, second.state, store, Budget())
    assert third.stats.complete

    horizon = datetime.now(timezone.utc) - timedelta(days=5)
    want = [t["id"] for t in corpus.visible() if "python" in t.get("note_tweet", t)["text"].lower()
            and datetime.fromisoformat(t["created_at"].replace("Z", "+00:00")) >= horizon + timedelta(minutes=1)]
    got = store.post_ids()
    assert len(got) == len(set(got))
    assert set(want) <= set(got)
    keys = [(p["start_time"], p["end_time"], p.get("next_token")) for p in ok_params(server, "search/recent")
            if "end_time" in p]
    assert len(keys) == len(set(keys)), "no backfill page fetched twice across the three runs"
    polls = [p for p in ok_params(server, "search/recent") if "end_time" not in p]
    assert len(polls) == 3, "each run polls for new posts once"


def test_search_backfill_walks_bounded_windows_then_polls_with_since_id(server, corpus, make_client, lake):
    entry = search(query="python", horizon=4, backfill_window_hours=24)
    store = LakeStore(lake, entry)
    client = make_client()
    result = sync_source(client, entry, {}, store, Budget())
    windows = [p for p in ok_params(server, "search/recent") if "end_time" in p]
    for p in windows:
        span = datetime.fromisoformat(p["end_time"].replace("Z", "+00:00")) - datetime.fromisoformat(
            p["start_time"].replace("Z", "+00:00"))
        assert span <= timedelta(hours=48)
    assert windows[-1]["start_time"] >= (datetime.now(timezone.utc) - timedelta(days=4, minutes=5)).strftime("%Y-%m-%dT%H:%M")
    assert result.state["backfill"]["done"]

    new = corpus.add_tweet(corpus.user_by_name("kavir") or next(iter(corpus.users.values())),
                           datetime.now(timezone.utc) - timedelta(seconds=1), text="python news")
    server.clear_log()
    result = sync_source(client, entry, result.state, store, Budget())
    assert server.counts() == {"search/recent": 1}
    assert store.post_ids()[-1] == new["id"]
    server.clear_log()
    result = sync_source(client, entry, result.state, store, Budget())
    assert ok_params(server, "search/recent")[0]["since_id"] == new["id"]
    assert server.counts() == {"search/recent": 1}


def test_full_archive_is_paced_and_falls_back_to_a_smaller_page(server, corpus, make_client, lake):
    server.max_results_cap["search/all"] = 100
    entry = search(name="arch", query="tehran", horizon=3, endpoint="all", max_results=500, backfill_window_hours=72)
    store = LakeStore(lake, entry)
    # a virtual clock that only the client's own waits move: the interval is checked on what the client
    # does, not on when a loaded machine happened to deliver the requests
    now = [time.time()]
    sent: list[float] = []
    client = make_client(replace(FAST, full_archive_interval_seconds=0.3),
                         sleep=lambda s: now.__setitem__(0, now[0] + s), clock=lambda: now[0])
    client.http.event_hooks["request"].append(lambda request: sent.append(now[0]))
    result = sync_source(client, entry, {}, store, Budget())
    statuses = [r.status for r in server.log if r.endpoint == "search/all"]
    assert statuses.count(400) == 1 and result.state["page_size"] == 100
    assert len(sent) == len(statuses) > 2
    assert all(b - a >= 0.3 - 1e-6 for a, b in zip(sent, sent[1:])), "full-archive requests keep their interval"
    server.clear_log()
    sync_source(client, entry, result.state, store, Budget())
    assert [r.params["max_results"] for r in server.log] == ["100"], "the accepted size is remembered"


def test_parents_are_fetched_once(server, corpus, make_client, lake):
    entry = timeline(complete_threads=True)
    store = LakeStore(lake, entry)
    memory = LakeThreadMemory(lake, "acme", "x", entry.key)
    client = make_client()
    result = sync_source(client, entry, {}, store, Budget(), memory=memory)

    lookups = ok_params(server, "tweets")
    asked = [i for p in lookups for i in p["ids"].split(",")]
    assert asked, "the corpus has replies whose grandparents are not in includes"
    assert all(len(p["ids"].split(",")) <= 100 for p in lookups)
    assert len(asked) == len(set(asked)), "no id asked twice"
    assert result.stats.parents_found > 0
    parents = store.post_ids("parents")
    assert set(parents) <= set(asked)
    have = {i for page in store.pages() for i in [t["id"] for t in page.get("data", [])]
            + [t["id"] for t in page.get("includes", {}).get("tweets", [])]}
    known, pending = memory.load()
    assert not pending and set(asked) <= known

    server.clear_log()
    sync_source(client, entry, result.state, store, Budget(), memory=memory)
    assert server.counts()["tweets"] == 0, "nothing new: nothing looked up again"
    # a new reply into an already completed thread does not re-fetch its known ancestors
    user = corpus.user_by_name("data_eng")
    known_parent = corpus.tweets[parents[0]]
    corpus.add_tweet(user, datetime.now(timezone.utc) - timedelta(seconds=1), kind="reply", parent=known_parent)
    server.clear_log()
    sync_source(client, entry, store.state, store, Budget(), memory=memory)
    again = [i for p in ok_params(server, "tweets") for i in p["ids"].split(",")]
    assert not set(again) & (set(asked) | have)


def test_unknown_suspended_and_protected_accounts_are_permanent(server, corpus, make_client, lake):
    corpus.suspended.add(corpus.user_by_name("py_weekly")["id"])
    corpus.protected.add(corpus.user_by_name("tehran_daily")["id"])
    for ident, words in (("py_weekly", "suspended"), ("nobody_here", "Could not find user"),
                         (corpus.user_by_name("py_weekly")["id"], "suspended"),
                         ("tehran_daily", "not authorized")):
        entry = timeline(identifier=ident)
        with pytest.raises(PermanentError, match=words):
            sync_source(make_client(), entry, {}, LakeStore(lake, entry), Budget())


def test_raw_pages_pass_the_x_v2_normalizer(server, corpus, make_client, lake):
    normalize = pytest.importorskip("crawl_assets.normalize")
    from crawl_assets.schema import Rejection

    entry = timeline(complete_threads=True)
    store = LakeStore(lake, entry)
    sync_source(make_client(), entry, {}, store, Budget(), memory=LakeThreadMemory(lake, "acme", "x", entry.key))
    search_entry = search(query="کتاب", horizon=6)
    search_store = LakeStore(lake, search_entry)
    sync_source(make_client(), search_entry, {}, search_store, Budget())

    kinds: Counter[str] = Counter()
    rejected = []
    total = 0
    for batch in [*store.batches, *search_store.batches]:
        ctx = normalize.NormalizeContext(tenant="acme", source=batch.manifest.source, method="api")
        with lake.open_raw(batch) as fh:
            for item in normalize.normalize_stream("x-v2", fh, name=batch.path, context=ctx):
                if isinstance(item, Rejection):
                    rejected.append(item)
                else:
                    total += 1
                    kinds[item.kind] += 1
    assert not rejected
    assert total == len(store.post_ids()) + len(search_store.post_ids())
    assert {"post", "reply", "quote", "repost"} <= set(kinds)


def test_a_refused_next_token_resumes_below_the_oldest_stored_post(server, corpus, make_client, lake):
    entry = timeline(max_results=20)
    store = LakeStore(lake, entry)
    client = make_client()
    first = sync_source(client, entry, {}, store, Budget(max_pages=2))
    state = dict(first.state, **{"pass": dict(first.state["pass"], token="not*a*token")})
    result = sync_source(client, entry, state, store, Budget())
    assert result.stats.complete and result.stats.tokens_replaced == 1
    assert store.post_ids() == expected_timeline(corpus, "data_eng"), "no gap, no duplicate"
    assert any("until_id" in p for p in ok_params(server, "users/tweets"))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budgets=st.lists(st.integers(1, 4), min_size=1, max_size=6),
       drops=st.lists(st.integers(0, 12), max_size=3))
def test_any_sequence_of_stops_and_failures_ends_complete_without_gaps_or_refetch(tmp_path_factory, budgets, drops):
    """Runs cut by budgets and by connections that keep dropping, in any order, add up to one clean sync."""
    corpus = build_corpus(300, days=5, seed=len(budgets) * 13 + len(drops))
    lake = Lake(str(tmp_path_factory.mktemp("lake")))
    entry = timeline(max_results=5, pages_per_batch=2)
    store = LakeStore(lake, entry)
    with XAPIServer(corpus) as server:
        for after in drops:
            server.inject("drop", "users/tweets", times=FAST.max_retries + 1, after=after)
        client = XClient(new_http_client(server.url, "test-token"), FAST)
        state: dict = {}
        runs = [Budget(max_pages=b) for b in budgets] + [Budget()] * (len(drops) + 1)
        for budget in runs:
            try:
                state = sync_source(client, entry, state, store, budget).state
            except TransientError:
                state = store.state
            if not state.get("pass") and state.get("newest_id"):
                break
        client.http.close()
        tokens = [p.get("pagination_token") for p in ok_params(server, "users/tweets")]
    assert store.post_ids() == expected_timeline(corpus, "data_eng")
    assert len(tokens) == len(set(tokens))


def test_refresh_window_rereads_stored_posts_by_id_and_records_deletions(server, corpus, make_client, lake):
    """Opt-in (X bills reads): the newest ``refresh_window`` stored posts are looked up again once the sync
    has caught up; new counters come back as a new observation, a vanished post as a deletion line."""
    entry = timeline()
    entry = entry.model_copy(update={"policy": entry.policy.model_copy(update={"refresh_window": 120})})
    store = LakeStore(lake, entry)
    client = make_client()
    first = sync_source(client, entry, {}, store, Budget())
    stored = expected_timeline(corpus, "data_eng")
    assert len(stored) > 120 and first.state["recent"] == stored[:120], "the newest ids, newest first"
    assert first.stats.refreshed == 0, "posts fetched by this very sync are fresh"

    liked, deleted = stored[3], stored[10]
    corpus.tweets[liked]["public_metrics"] = {**corpus.tweets[liked]["public_metrics"], "like_count": 999}
    del corpus.tweets[deleted]
    server.clear_log()
    before = len(store.batches)
    result = sync_source(client, entry, first.state, store, Budget())

    assert server.counts() == {"users/tweets": 1, "tweets": 2}, "one since_id request, 120 ids in two lookups"
    assert result.stats.refreshed == 119 and result.stats.refresh_gone == 1
    assert deleted not in result.state["recent"] and len(result.state["recent"]) == 119
    lines = [line for batch in store.batches[before:] for line in lake.open_raw(batch)]
    pages = [orjson.loads(line) for line in lines]
    marks = [p for p in pages if p.get("_") == "crawl_assets.deleted"]
    assert [m["id"] for m in marks] == [deleted]
    refreshed = {t["id"]: t for p in pages for t in p.get("data") or ()}
    assert refreshed[liked]["public_metrics"]["like_count"] == 999
    assert store.batches[-1].manifest.extra["phase"] == "refresh"

    from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
    from crawl_assets.lake.tables import arrow_to_records

    latest = {}
    for batch in lake.raw_batches("acme", "x", entry.key):
        part = lake.table_part(TABLE, "acme", "x", entry.key, batch.manifest.batch_id)
        assert not normalize_batch(lake, batch, part).rejected
    for _, table in lake.read_parts(TABLE, "acme", "x", entry.key):
        latest.update((r["key"], r) for r in arrow_to_records(table))
    assert latest[f"x:{liked}"]["metrics"]["likes"] == 999, "the refreshed counters are the latest observation"
    gone = latest[f"x:{deleted}"]
    assert gone["deleted"] and gone["text"] and gone["author_id"], "a tombstone keeping the last content"
    assert not [r for k, r in latest.items() if r["deleted"] and k != f"x:{deleted}"]

    server.clear_log()
    off = sync_source(client, timeline(), result.state, store, Budget())
    assert server.counts() == {"users/tweets": 1} and off.stats.refreshed == 0, "off by default"


def test_a_smaller_refresh_window_costs_fewer_lookups_at_once(server, corpus, make_client, lake):
    wide = timeline()
    wide = wide.model_copy(update={"policy": wide.policy.model_copy(update={"refresh_window": 120})})
    narrow = wide.model_copy(update={"policy": wide.policy.model_copy(update={"refresh_window": 30})})
    store = LakeStore(lake, wide)
    client = make_client()
    first = sync_source(client, wide, {}, store, Budget())
    server.clear_log()
    result = sync_source(client, narrow, first.state, store, Budget())
    assert server.counts() == {"users/tweets": 1, "tweets": 1} and result.stats.refreshed == 30
    assert result.state["recent"] == first.state["recent"][:30]


def test_a_recent_search_gap_is_written_into_the_next_raw_batch_manifest(server, corpus, make_client, lake):
    """Releases' datasheets read the collectors' gaps from the lake: the gap is in the batch's manifest."""
    entry = search(query="python", horizon=4, backfill_window_hours=24)
    store = LakeStore(lake, entry)
    client = make_client()
    result = sync_source(client, entry, {}, store, Budget())
    ten_days_ago = int((datetime.now(timezone.utc) - timedelta(days=10)).timestamp() * 1000)
    state = {**result.state, "newest_id": str((ten_days_ago - 1288834974657) << 22)}
    corpus.add_tweet(next(iter(corpus.users.values())), datetime.now(timezone.utc) - timedelta(seconds=1),
                     text="python news")
    result = sync_source(client, entry, state, store, Budget())
    gaps = [g for b in lake.raw_batches("acme", "x", entry.key) for g in b.manifest.extra.get("gaps", ())]
    assert gaps == result.stats.gaps and len(set(gaps)) == 1 and "fell out of recent search" in gaps[0]
