"""The Telegram sync engine against Telethon itself: real TelegramClient paging, real TL objects and
real RPC errors from the MTProto-level stand-in (no socket)."""

from __future__ import annotations

import time
from collections import Counter
from datetime import datetime, timedelta, timezone

import orjson
import pytest

from crawl_assets.sources.telegram.errors import LongFloodWait, SourceGone, permanent_reason
from crawl_assets_tests.sources.telegram.conftest import entry
from crawl_assets_tests.standins import telegram_mtproto as tm

CONNECT = {"GetConfigRequest", "GetUsersRequest", "GetStateRequest", "GetDifferenceRequest"}


def delta(before: Counter, after: Counter) -> dict[str, int]:
    return {k: after[k] - before.get(k, 0) for k in after if after[k] - before.get(k, 0)}


def message_ids(h, kinds=("forward", "backfill")) -> list[int]:
    ids: list[int] = []
    for kind in kinds:
        ids.extend(m["id"] for m in h.lines(kind) if m.get("_") in ("Message", "MessageService"))
    return ids


def test_first_full_sync_stores_every_message_once(world, harness_factory):
    chat = world.channel("news_fa", messages=2500)
    h = harness_factory(entry("news", "https://t.me/news_fa"))
    result = h.sync()

    ids = message_ids(h)
    assert sorted(ids) == list(tm.iter_existing(chat))
    assert len(ids) == len(set(ids))
    assert result.state["history_complete"] is True
    assert (result.state["newest_id"], result.state["oldest_id"]) == (2500, 1)
    # Telethon's own paging: 100 per GetHistory, one username resolution, one chat metadata read
    assert world.counts["GetHistoryRequest"] == 25
    assert world.counts["ResolveUsernameRequest"] == 1
    assert world.counts["GetFullChannelRequest"] == 1
    # the chat's metadata is its own (empty) batch, carried in the manifest
    chat_batches = [b for b in h.lake.raw_batches("default", "telegram", h.source.key) if b.manifest.extra["kind"] == "chat"]
    assert len(chat_batches) == 1 and chat_batches[0].manifest.items == 0
    meta = chat_batches[0].manifest.extra["chat"]
    assert meta["title"] == chat.title and meta["username"] == "news_fa" and meta["participants_count"] == 1234
    assert meta["about"] == chat.about
    # checkpoints after every batch, each one only covering written batches
    assert result.stats.checkpoints >= result.stats.batches - 1
    assert all(b.manifest.format == "telegram" for b in h.lake.raw_batches("default", "telegram", h.source.key))


def test_incremental_with_nothing_new_is_two_pages_and_nothing_else(world, harness_factory):
    world.channel("quiet", messages=600)
    h = harness_factory(entry("quiet", "@quiet", refresh_window=200))
    h.sync()
    batches = len(h.lake.raw_batches("default", "telegram", h.source.key))
    before = Counter(world.counts)
    result = h.sync()

    # connection setup, then only the refresh window (200 messages = 2 pages): no username resolution
    # (the peer is cached in the cursor), no metadata (not due), no backfill (history complete)
    assert delta(before, world.counts) == {**{k: 1 for k in CONNECT}, "GetHistoryRequest": 2}
    assert result.stats.new == result.stats.updated == result.stats.deleted == 0
    assert len(h.lake.raw_batches("default", "telegram", h.source.key)) == batches  # nothing written


def test_incremental_with_new_messages_small_and_beyond_the_window(world, harness_factory):
    chat = world.channel("busy", messages=1000)
    h = harness_factory(entry("busy", "@busy", refresh_window=100))
    h.sync()
    chat.post(30)
    r1 = h.sync()
    assert r1.stats.new == 30 and r1.state["newest_id"] == 1030
    before = Counter(world.counts)
    chat.post(750)  # more than the window: the gap is filled oldest-first with min_id
    r2 = h.sync()
    assert r2.stats.new == 750 and r2.state["newest_id"] == 1780
    assert delta(before, world.counts)["GetHistoryRequest"] <= 1 + 8
    ids = message_ids(h)
    assert sorted(ids) == list(tm.iter_existing(chat)) and len(ids) == len(set(ids))


def test_kill_in_the_middle_of_history_then_resume_has_no_gaps_or_duplicates(world, harness_factory):
    chat = world.channel("long", messages=4000)
    h = harness_factory(entry("long", "@long"), pages_per_checkpoint=2)
    clock = h.clock
    # run 1: the budget stops it after 9 pages
    r1 = h.sync(max_pages_per_run=9)
    assert r1.stats.budget_exhausted and not r1.state["history_complete"]
    # run 2: killed by a long flood wait in the middle of the backfill
    world.fail("GetHistoryRequest", "FLOOD_WAIT_3600", after=7)
    with pytest.raises(LongFloodWait) as caught:
        h.sync()
    assert caught.value.seconds == 3600
    killed_at = h.state["oldest_id"]
    assert 1 < killed_at < r1.state["oldest_id"]
    # the account rests for the wait Telegram asked: a run before its end does not even connect
    connects = world.connects
    clock.advance(3000)
    with pytest.raises(LongFloodWait, match="the account rests from a flood wait: 600s to go"):
        h.sync()
    assert world.connects == connects
    clock.advance(600)
    # run 3: resumes from the last checkpoint
    chat.post(5)
    r3 = h.sync()
    assert r3.state["history_complete"] and r3.state["oldest_id"] == 1 and r3.state["newest_id"] == 4005
    ids = message_ids(h)
    assert len(ids) == len(set(ids)), "a message was stored twice"
    assert sorted(ids) == list(tm.iter_existing(chat)), "a message is missing"


def test_edits_deletions_and_counters_in_the_refresh_window(world, harness_factory):
    chat = world.channel("edits", messages=800)
    h = harness_factory(entry("edits", "@edits", refresh_window=300))
    h.sync()
    chat.edit(790)
    chat.edit(600)
    chat.bump(780)
    chat.delete(795, 650)
    chat.delete(20)  # outside the window: cannot be known, must not be guessed
    result = h.sync()

    refresh = h.lines("refresh")
    edited = {m["id"]: m for m in refresh if m.get("_") == "Message"}
    assert set(edited) == {790, 600, 780}
    assert edited[790]["edit_date"] is not None and "(ویرایش 1)" in edited[790]["message"]
    assert edited[780]["edit_date"] is None and edited[780]["views"] > 1000
    deleted = [m for m in refresh if m.get("_") == "crawl_assets.deleted"]
    assert sorted(d["id"] for d in deleted) == [650, 795]
    assert deleted[0]["peer_id"] == {"_": "PeerChannel", "channel_id": chat.id}
    datetime.fromisoformat(deleted[0]["observed_at"])
    assert (result.stats.updated, result.stats.deleted) == (3, 2)
    # a third sync sees nothing new: each change is reported once
    again = h.sync()
    assert (again.stats.updated, again.stats.deleted) == (0, 0)


def test_no_deletion_is_inferred_from_a_failed_read(world, harness_factory):
    chat = world.channel("flaky", messages=500)
    h = harness_factory(entry("flaky", "@flaky", refresh_window=300))
    h.sync()
    chat.delete(450, 480)
    world.fail("GetHistoryRequest", "FLOOD_WAIT_999", after=1)  # the window's 2nd page fails
    with pytest.raises(LongFloodWait):
        h.sync()
    assert not [m for m in h.lines() if m.get("_") == "crawl_assets.deleted"]
    h.clock.advance(999)  # the run retried after Telegram's wait
    h.sync()  # the next complete read finds them
    assert sorted(m["id"] for m in h.lines() if m.get("_") == "crawl_assets.deleted") == [450, 480]


def test_short_flood_wait_is_slept_in_place(world, harness_factory):
    world.channel("floody", messages=300)
    h = harness_factory(entry("floody", "@floody"), flood_sleep_threshold_seconds=5)
    world.fail("GetHistoryRequest", "FLOOD_WAIT_1", after=1)
    result = h.sync()
    assert result.state["history_complete"]
    assert h.last_client.flood_waited == 1
    assert sorted(message_ids(h)) == list(range(1, 301))


def test_long_flood_wait_ends_the_run_with_the_server_wait(world, harness_factory):
    world.channel("floody2", messages=300)
    h = harness_factory(entry("floody2", "@floody2"), flood_sleep_threshold_seconds=5)
    world.fail("GetFullChannelRequest", "FLOOD_WAIT_120")
    with pytest.raises(LongFloodWait) as caught:
        h.sync()
    assert caught.value.seconds == 120 and caught.value.request == "GetFullChannelRequest"


def test_network_errors_are_retried_with_backoff(world, harness_factory):
    world.channel("netty", messages=300)
    h = harness_factory(entry("netty", "@netty"))
    world.fail("GetHistoryRequest", "NETWORK", times=2, after=1)
    result = h.sync()
    assert result.state["history_complete"] and h.last_client.network_retried == 2


@pytest.mark.parametrize("setup, expected", [
    ("private", "private"),
    ("missing", "UsernameNotOccupiedError"),
    ("private_cached", "ChannelPrivateError"),
])
def test_permanent_errors_are_recognised(world, harness_factory, setup, expected):
    chat = world.channel("secret", messages=300)
    h = harness_factory(entry("secret", "@secret" if setup != "missing" else "@nobody_here"))
    if setup == "private":
        chat.private = True
    if setup == "private_cached":
        h.sync()
        chat.private = True
    with pytest.raises(Exception) as caught:
        h.sync()
    reason = permanent_reason(caught.value)
    assert reason is not None and expected in reason


def test_revoked_session_is_reported_by_the_health_check(world, tmp_path):
    import asyncio

    from crawl_assets_tests.sources.telegram.conftest import make_resource

    world.account("default").revoked = True
    resource = make_resource(tmp_path)
    report = asyncio.run(resource.health())
    assert report["ok"] is False and "not authorized" in report["reason"]
    world.account("default").revoked = False
    assert asyncio.run(resource.health())["ok"] is True


def test_history_horizon_stops_the_backfill(world, harness_factory):
    chat = world.channel("deep", messages=2000, step_seconds=3600)  # one message an hour
    h = harness_factory(entry("deep", "@deep", horizon=30, refresh_window=100))
    result = h.sync()
    assert result.state["history_complete"]
    cutoff = datetime.now(timezone.utc) - timedelta(days=30, minutes=5)
    dates = [datetime.fromisoformat(m["date"]) for m in h.lines("backfill")]
    assert dates and min(dates) >= cutoff
    assert result.state["oldest_id"] > 2000 - 30 * 24 - 2
    assert world.counts["GetHistoryRequest"] <= 9


def test_comments_of_the_linked_discussion_group(world, harness_factory):
    chat = world.channel("withchat", messages=400)
    group = world.discussion(chat, every=5, comments=3, posts=30)
    h = harness_factory(entry("withchat", "@withchat", refresh_window=200, comments=True))
    result = h.sync()
    group_lines = [m for m in h.lines() if m.get("peer_id", {}).get("channel_id") == group.id]
    comments = [m for m in group_lines if m.get("reply_to")]
    roots = [m for m in group_lines if m.get("fwd_from")]
    assert len(roots) == 30 and len(comments) == 90
    assert all(r["fwd_from"]["from_id"]["channel_id"] == chat.id for r in roots)
    assert result.stats.comments == 90
    assert world.counts["GetDiscussionMessageRequest"] == 30
    # a new comment on a post inside the refresh window is picked up by the next sync
    post = max(chat.threads)
    world.add_comment(chat, post)
    again = h.sync()
    assert again.stats.comments == 1 and again.stats.updated == 1


def test_takeout_wraps_the_requests(world, harness_factory):
    world.channel("export", messages=300)
    h = harness_factory(entry("export", "@export", takeout=True))
    result = h.sync()
    assert result.state["history_complete"]
    assert world.counts["InitTakeoutSessionRequest"] == 1 and world.counts["FinishTakeoutSessionRequest"] == 1


def test_media_metadata_by_default_files_only_when_enabled(world, harness_factory, tmp_path):
    world.channel("pics", messages=60)
    h = harness_factory(entry("pics", "@pics"))
    h.sync()
    photos = [m for m in h.lines() if (m.get("media") or {}).get("_") == "MessageMediaPhoto"]
    assert len(photos) == 4 and photos[0]["media"]["photo"]["sizes"][-1]["w"] == 1280
    assert not list((tmp_path / "lake").glob("media/**/*.jpg"))
    assert world.counts["GetFileRequest"] == 0

    h2 = harness_factory(entry("pics2", "@pics", download_media=True))
    result = h2.sync()
    files = sorted((tmp_path / "lake").glob("media/default/telegram/default.telegram.pics2/*/*.jpg"))
    assert result.stats.media_files == 4 and len(files) == 4
    assert all(f.stat().st_size == 2048 for f in files)
    assert not list((tmp_path / "lake").glob("raw/**/*.jpg"))


def test_media_chunks_are_paced_and_counted_and_a_short_flood_wait_on_one_is_slept(world, harness_factory, tmp_path):
    world.channel("pics", messages=60)
    world.fail("GetFileRequest", "FLOOD_WAIT_1", after=1)  # the second file's chunk is refused once
    h = harness_factory(entry("pics", "@pics", download_media=True))
    result = h.sync()
    assert result.stats.media_files == 4
    assert len(list((tmp_path / "lake").glob("media/default/telegram/default.telegram.pics/*/*.jpg"))) == 4
    assert h.last_client.flood_waited == 1
    # four files of one chunk each, one chunk asked twice: the client counts what the server saw
    assert world.counts["GetFileRequest"] == 5 == h.last_client.request_counts["GetFileRequest"]


def test_accounts_of_the_pool_are_used_by_credential_name(world, harness_factory):
    world.channel("pool", messages=150)
    h = harness_factory(entry("pool", "@pool", credential="alice"))
    h.sync()
    assert world.by_account["alice"]["GetHistoryRequest"] == 2
    assert "GetHistoryRequest" not in world.by_account.get("default", {})
    assert h.state["peer"]["credential"] == "default:alice"  # the account: a tenant's credential


def test_unknown_credential_is_permanent(world, harness_factory):
    world.channel("nocred", messages=10)
    h = harness_factory(entry("nocred", "@nocred"))
    h.source = entry("nocred", "@nocred", credential="bob")
    with pytest.raises(SourceGone) as caught:
        h.sync()
    assert "CRAWL_TELEGRAM_SESSION__DEFAULT__BOB" in caught.value.reason


def test_an_account_is_used_by_one_run_at_a_time(world, harness_factory, tmp_path):
    from crawl_assets.sources.telegram.errors import AccountBusy
    from crawl_assets.sources.telegram.pacing import AccountLock

    world.channel("locked", messages=10)
    h = harness_factory(entry("locked", "@locked"), account_wait_seconds=0.3)
    with AccountLock(tmp_path / "locks", "default", None, 0):
        with pytest.raises(AccountBusy):
            h.sync()
    assert world.connects == 0
    h.sync()  # released: the next run gets it
    assert world.connects == 1


def test_requests_are_paced_per_account(world, harness_factory):
    world.channel("paced", messages=250)
    h = harness_factory(entry("paced", "@paced"), request_interval_seconds=0.05)
    started = h.clock.now()
    h.sync()
    elapsed = h.clock.now() - started
    made = h.last_client.requests_made
    assert made >= 6 and elapsed >= 0.05 * (made - 1) - 1e-6 and h.last_client.pacer.waited > 0


def test_the_stand_in_opens_no_socket(world, harness_factory, monkeypatch):
    import asyncio
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("a socket was opened")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(asyncio, "open_connection", refuse)
    world.channel("offline", messages=120)
    h = harness_factory(entry("offline", "@offline"))
    assert h.sync().state["history_complete"]


@pytest.mark.parametrize("old_cursor", [False, True], ids=["cursor", "cursor-before-megagroup"])
def test_a_deletion_names_the_chat_type_its_messages_had(world, harness_factory, old_cursor):
    """Issue 29: a tombstone of a supergroup (a PeerChannel too) is no channel post; the deletion line says which
    chat it was, and a cursor saved before that was noted learns it from the messages it reads."""
    import io

    from crawl_assets.normalize import NormalizeContext, normalize_stream
    from crawl_assets.schema import Rejection

    seen = {}
    for name, megagroup in (("devs", True), ("news", False)):
        chat = world.channel(name, messages=300, megagroup=megagroup)
        h = harness_factory(entry(name, f"@{name}", refresh_window=100))
        h.sync()
        if old_cursor:
            del h.checkpoints[-1]["peer"]["megagroup"]
        chat.delete(290)
        h.sync()
        deleted = [line for line in h.lines("refresh") if line.get("_") == "crawl_assets.deleted"]
        assert [d["id"] for d in deleted] == [290]
        data = orjson.dumps(deleted[0]) + b"\n"
        records = [r for r in normalize_stream("telegram", io.BytesIO(data), name="refresh", context=NormalizeContext())]
        assert not [r for r in records if isinstance(r, Rejection)]
        seen[name] = (deleted[0]["chat_type"], records[0].metadata["chat_type"], records[0].kind)
    assert seen == {"devs": ("supergroup", "supergroup", "message"), "news": ("channel", "channel", "post")}
