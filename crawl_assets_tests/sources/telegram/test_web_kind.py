"""The ``web_channel`` kind against the t.me/s stand-in (pages of our own making in the real page's structure,
rendered from the MTProto stand-in's simulated chats): backwards history with checkpoints, incremental syncs
with a cursor, the gap read oldest first, rate limits, refusals, deletions; and the same channel through this
kind and the API kind gives the same keys and texts."""

from __future__ import annotations

import pytest

from crawl_assets.sdk.errors import PauseSource, RetryLater
from crawl_assets.sdk.http import RetrySettings
from crawl_assets.sources.telegram.web_client import NO_PREVIEW, new_client
from crawl_assets_tests.sources.telegram.conftest import entry as api_entry
from crawl_assets_tests.sources.telegram.web_harness import normalize_all, web_entry, web_harness
from crawl_assets_tests.standins import telegram_mtproto as tm
from crawl_assets_tests.standins.telegram_web import TelegramWebStandIn


@pytest.fixture
def chat() -> tm.SimChat:
    world = tm.World()
    return world.channel("webparity", messages=75, step_seconds=600)


@pytest.fixture
def stand_in(chat: tm.SimChat):
    with TelegramWebStandIn({"webparity": chat}) as server:
        yield server


def _requested(stand_in: TelegramWebStandIn) -> list[dict[str, str]]:
    return [{k: v[0] for k, v in e.query.items()} for e in stand_in.log if e.endpoint == "s"]


def test_first_sync_reads_the_history_backwards_a_batch_of_pages_per_checkpoint(tmp_path, stand_in, chat):
    h = web_harness(tmp_path, stand_in.url, web_entry("wp", "@webparity"), pages_per_checkpoint=2)
    collected = h.sync()
    # newest page, then before=56, 36, 16: four pages of 20 (75 messages), two pages per raw batch
    assert _requested(stand_in) == [{}, {"before": "56"}, {"before": "36"}, {"before": "16"}]
    assert [b.manifest.items for b in collected.batches] == [2, 2]
    assert h.checkpointer.saves == 2 and h.state["history_complete"] and h.state["oldest_id"] == 1
    assert h.state["newest_id"] == 75 and collected.metadata["complete"] is True
    records = h.records()
    service = {1} | {i for i in range(1, 76) if i % 97 == 0}
    assert sorted(int(r["native_id"]) for r in records) == [i for i in range(1, 76) if i not in service]
    assert {r["key"].rsplit(":", 1)[0] for r in records} == {f"telegram:{chat.id}"}  # the id from data-view


def test_next_syncs_read_only_the_newest_page_then_the_gap_oldest_first(tmp_path, stand_in, chat):
    h = web_harness(tmp_path, stand_in.url, web_entry("wp", "webparity"))
    h.sync()
    stand_in.log.clear()
    h.sync()
    assert _requested(stand_in) == [{}]  # caught up: the newest page alone (its counters refreshed)
    chat.post(50)
    stand_in.log.clear()
    h.sync()
    # 50 new: the newest page shows 106..125, so 76..105 are read after the cursor, oldest first, before it is stored
    assert _requested(stand_in) == [{}, {"after": "75"}, {"after": "95"}]
    assert h.state["newest_id"] == 125 and h.state["window"] == list(range(106, 126))
    assert sorted(int(r["native_id"]) for r in h.records() if int(r["native_id"]) > 75) == [
        i for i in range(76, 126) if i % 97]  # 97: a service message (pinned), no record


def test_a_spent_budget_stops_the_backfill_and_the_next_run_goes_on_from_the_cursor(tmp_path, stand_in):
    h = web_harness(tmp_path, stand_in.url, web_entry("wp", "t.me/s/webparity"), max_pages_per_run=2,
                    pages_per_checkpoint=1)
    h.sync()
    assert h.state["oldest_id"] == 36 and not h.state["history_complete"]
    stand_in.log.clear()
    h.sync()
    assert _requested(stand_in) == [{}, {"before": "36"}]
    h.sync()
    assert h.state["history_complete"] and h.state["oldest_id"] == 1
    assert len({r["key"] for r in h.records()}) == 74  # every post once (message 1 is the channel's creation)


def test_a_gap_larger_than_the_budget_never_moves_the_cursor_past_unread_messages(tmp_path, stand_in, chat):
    h = web_harness(tmp_path, stand_in.url, web_entry("wp", "webparity"), max_pages_per_run=3)
    h.sync(max_pages_per_run=10)
    chat.post(100)  # 76..175: the gap below the newest page needs 4 pages
    h.sync()
    assert h.state["newest_id"] == 115  # two pages after 75 read and stored (the newest page is not)
    h.sync()
    assert h.state["newest_id"] == 175
    assert sorted(int(r["native_id"]) for r in h.records() if int(r["native_id"]) > 75) == [
        i for i in range(76, 176) if i % 97]


def test_a_429_is_waited_out_by_its_retry_after(stand_in):
    slept: list[float] = []
    client = new_client(stand_in.url, interval=0.0, sleep=slept.append)
    stand_in.inject("429", endpoint="s", headers={"Retry-After": "7"})
    page = client.page("webparity")
    assert b"tgme_widget_message" in page.body and slept == [7.0] and client.stats.throttled == 1
    client.http.close()


def test_pages_keep_their_gap(stand_in):
    now = [1000.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    client = new_client(stand_in.url, interval=2.5, sleep=sleep)
    client.clock = lambda: now[0]
    client.pacer.clock = client.clock
    client.page("webparity")
    client.page("webparity", before=40)
    assert slept == [2.5]
    client.http.close()


def test_a_long_retry_after_ends_the_step_to_retry_after_it(tmp_path, stand_in):
    h = web_harness(tmp_path, stand_in.url, web_entry("wp", "webparity"))
    stand_in.inject("429", endpoint="s", headers={"Retry-After": "600"})
    with pytest.raises(RetryLater) as caught:
        h.sync()
    assert caught.value.seconds == 600


@pytest.mark.parametrize("name", ["nosuchchannel", "agroupchat"])
def test_a_name_without_a_public_preview_pauses_the_source(tmp_path, chat, name):
    group = tm.World().channel("agroupchat", messages=5, megagroup=True)
    with TelegramWebStandIn({"webparity": chat, "agroupchat": group}) as server:
        with pytest.raises(PauseSource, match="no public web preview"):
            web_harness(tmp_path, server.url, web_entry("wp", name)).sync()
    assert "no public web preview" in NO_PREVIEW


def test_options_that_need_an_account_pause_the_source(tmp_path, stand_in):
    with pytest.raises(PauseSource, match="comments need an account"):
        web_harness(tmp_path, stand_in.url, web_entry("wp", "webparity", comments=True)).sync()
    assert not stand_in.log  # refused before any request


def test_bounded_reads_retry_then_fail(stand_in):
    client = new_client(stand_in.url, interval=0.0, sleep=lambda s: None,
                        settings=RetrySettings(max_retries=1, backoff_seconds=0.0))
    client.max_response_bytes = 1000
    with pytest.raises(Exception, match="over the 1000-byte limit"):
        client.page("webparity")
    client.http.close()


def test_an_id_gone_from_the_newest_page_is_a_deletion(tmp_path, stand_in, chat):
    h = web_harness(tmp_path, stand_in.url, web_entry("wp", "webparity"))
    h.sync()
    chat.delete(70)
    h.sync()
    records = {r["native_id"]: r for r in h.records()}
    assert records["70"]["deleted"] is True and records["69"]["deleted"] is False


def test_what_the_page_shows_of_a_message(tmp_path, stand_in, chat):
    chat.edit(65)
    h = web_harness(tmp_path, stand_in.url, web_entry("wp", "webparity"))
    h.sync()
    by_id = {int(r["native_id"]): r for r in h.records()}
    reply, forward, photo, signed, edited = by_id[63], by_id[70], by_id[65], by_id[55], by_id[65]
    assert reply["kind"] == "reply" and reply["reply_to"] == f"telegram:{chat.id}:60"
    assert forward["kind"] == "repost" and forward["metadata"]["forwarded_from"] == {
        "from_type": "channel", "from_name": "خبرگزاری مبدأ", "from_username": "origin_news", "channel_post": 7}
    assert photo["media"][0]["type"] == "photo" and photo["media"][0]["url"].endswith(".jpg")
    assert signed["metadata"]["post_author"] == "Editor"
    assert edited["metadata"]["edited"] is True and edited["edited_at"] is None  # the page shows no edit time
    assert by_id[64]["metrics"]["views"] == 1100 and by_id[64]["metadata"]["views_rounded"] is True
    assert by_id[64]["metrics"]["reactions"] == {"👍": 5 + 64 % 9, "❤": 2}
    assert by_id[64]["metadata"]["collected_via"] == "web_preview"


def test_the_same_channel_through_the_web_and_the_api_gives_the_same_keys_and_texts(tmp_path, harness_factory, world):
    chat = world.channel("webparity", messages=150)
    chat.edit(140)
    api = harness_factory(api_entry("wp-api", "@webparity"))
    api.sync()
    api_records = {r["key"]: r for r in normalize_all(api.lake, api.source)}
    with TelegramWebStandIn({"webparity": chat}) as server:
        web = web_harness(tmp_path / "web", server.url, web_entry("wp-web", "webparity"))
        web.sync()
        web_records = {r["key"]: r for r in web.records()}
    assert len(api_records) == 148 and web_records.keys() == api_records.keys()
    for key, a in api_records.items():
        w = web_records[key]
        same = ("text", "created_at", "kind", "author_id", "hashtags", "mentions", "urls", "reply_to", "conversation_id",
                "native_id", "lang")
        assert {f: w[f] for f in same} == {f: a[f] for f in same}, key
        assert [m["type"] for m in w["media"]] == [m["type"] for m in a["media"]]
        assert w["metrics"]["reactions"] == a["metrics"]["reactions"]
        assert abs(w["metrics"]["views"] - a["metrics"]["views"]) <= 50  # "1.2K": rounded to a tenth of a thousand
        if a["repost_of"]:  # the page names the origin by username, the API by id
            assert w["metadata"]["forwarded_from"]["channel_post"] == a["metadata"]["forwarded_from"]["channel_post"]


def test_the_web_settings_come_from_the_environment(stand_in):
    from crawl_assets.sources.telegram.resource import TelegramResource

    res = TelegramResource.from_env({"CRAWL_TELEGRAM_WEB_BASE_URL": stand_in.url, "CRAWL_TELEGRAM_WEB_INTERVAL": "0.25"})
    assert (res.web_base_url, res.web_request_interval_seconds) == (stand_in.url, 0.25)
    assert TelegramResource.from_env({}).web_base_url == ""  # https://t.me


def test_erasing_the_channel_as_an_author_drops_its_pages(tmp_path, stand_in, chat):
    """The JSON scrub cannot cut inside a page's HTML; the erasure's re-normalization finds the channel's records
    left and drops their lines (every message on a page is the channel's)."""
    from crawl_assets.erasure import Selector, erase
    from crawl_assets.erasure.authors import Author

    h = web_harness(tmp_path, stand_in.url, web_entry("wp", "webparity"))
    h.sync()
    assert len(h.records()) == 74
    report = erase(h.lake, None, Selector(tenant="default", author=Author("telegram", str(chat.id))),
                   lock_wait_seconds=5)
    assert report.records == 74 and h.records() == []
    assert all(b.manifest.items == 0 for b in h.lake.raw_batches("default", "telegram", h.entry.key))
