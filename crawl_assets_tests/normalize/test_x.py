"""Golden tests for ``x-v2`` (API v2 pages with includes, one per line, as twarc2 writes) and ``x-archive``."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from crawl_assets.normalize import NormalizeContext
from crawl_assets_tests.normalize.helpers import SAMPLES, lines, run

USERS = [{"id": "11", "username": "Sara_K", "name": "Sara"}, {"id": "12", "username": "Ali_Reza", "name": "Ali"}]


def _tweet(tweet_id: str, text: str = "hello world from the test", **fields) -> dict:
    tweet = {"id": tweet_id, "text": text, "author_id": "11", "created_at": "2024-05-01T10:00:00.000Z",
             "conversation_id": tweet_id, "lang": "en", "edit_history_tweet_ids": [tweet_id]}  # fmt: skip
    tweet.update(fields)
    return tweet


def _page(*tweets: dict, **extra) -> str:
    page = {"data": list(tweets), "includes": {"users": USERS}, "meta": {"result_count": len(tweets)},
            "__twarc": {"url": "https://api.x.com/2/tweets/search/recent", "version": "2.14.1",
                        "retrieved_at": "2024-05-02T08:00:00+00:00"}}  # fmt: skip
    for key, value in extra.items():
        page.setdefault("includes", {})[key] = value
    return json.dumps(page, ensure_ascii=False)


def test_post_with_entities_metrics_media_and_includes():
    text = "سلام به همه #خبر_فوري @Ali_Reza https://t.co/a"
    tweet = _tweet(
        "101", text, lang="fa", possibly_sensitive=False, source="Sample client",
        entities={
            "hashtags": [{"start": 12, "end": 22, "tag": "خبر_فوري"}],
            "mentions": [{"start": 23, "end": 32, "username": "Ali_Reza", "id": "12"}],
            "urls": [{"start": 33, "end": 47, "url": "https://t.co/a", "expanded_url": "https://example.org/a",
                      "display_url": "example.org/a"},
                     {"start": 48, "end": 60, "url": "https://t.co/m", "expanded_url": "https://x.com/p/1",
                      "media_key": "3_1"}],
            "cashtags": [{"start": 0, "end": 4, "tag": "ABC"}],
        },
        attachments={"media_keys": ["3_1", "7_2"]},
        public_metrics={"retweet_count": 1, "reply_count": 2, "like_count": 3, "quote_count": 4,
                        "bookmark_count": 5, "impression_count": 600},
    )  # fmt: skip
    media = [
        {"media_key": "3_1", "type": "photo", "url": "https://pbs.example.com/1.jpg", "width": 1200, "height": 800},
        {"media_key": "7_2", "type": "video", "duration_ms": 4500, "preview_image_url": "https://pbs.example.com/p.jpg",
         "variants": [{"bit_rate": 256000, "content_type": "video/mp4", "url": "https://video.example.com/low.mp4"},
                      {"bit_rate": 832000, "content_type": "video/mp4", "url": "https://video.example.com/hi.mp4"}]},
    ]  # fmt: skip
    records, rejections = run("x-v2", lines(_page(tweet, media=media)))
    assert rejections == []
    (record,) = records
    assert record.key == "x:101" and record.native_id == "101" and record.kind == "post"
    assert (record.author_id, record.author_handle) == ("11", "Sara_K")
    assert record.created_at == datetime(2024, 5, 1, 10, tzinfo=timezone.utc)
    assert record.text == text and record.lang == "fa"
    assert record.hashtags == ["خبر_فوری"] and record.mentions == ["ali_reza"]
    assert record.urls == ["https://example.org/a"]
    assert record.conversation_id == "x:101"
    assert [(m.type, m.id, m.url) for m in record.media] == [
        ("photo", "3_1", "https://pbs.example.com/1.jpg"), ("video", "7_2", "https://video.example.com/hi.mp4")]
    assert record.media[1].duration == 4.5 and record.media[1].mime == "video/mp4"
    metrics = record.metrics
    assert (metrics.likes, metrics.reposts, metrics.replies, metrics.quotes, metrics.bookmarks, metrics.views) == (
        3, 1, 2, 4, 5, 600)  # fmt: skip
    assert record.metadata["cashtags"] == ["ABC"] and record.metadata["x_lang"] == "fa"
    assert record.metadata["source"] == "Sample client"
    # twarc's retrieved_at fills collected_at when the caller does not know it
    assert record.provenance.collected_at == datetime(2024, 6, 1, tzinfo=timezone.utc)
    (unknown_time,), _ = run("x-v2", lines(_page(tweet)), NormalizeContext(tenant="t", source="s", method="api"))
    assert unknown_time.provenance.collected_at == datetime(2024, 5, 2, 8, tzinfo=timezone.utc)


def test_reply_quote_retweet_and_long_post():
    reply = _tweet("201", "@Sara_K yes", referenced_tweets=[{"type": "replied_to", "id": "101"}],
                   conversation_id="100", in_reply_to_user_id="11")  # fmt: skip
    quote = _tweet("202", "look at this", referenced_tweets=[{"type": "quoted", "id": "101"}])
    retweet = _tweet("203", "RT @Sara_K: the original…", referenced_tweets=[{"type": "retweeted", "id": "101"}])
    long_text = "متن بلند " * 60 + "#پایان"
    note = _tweet("204", long_text[:270] + "…", lang="fa",
                  note_tweet={"text": long_text, "entities": {"hashtags": [{"start": 540, "end": 546, "tag": "پایان"}]}})
    original = _tweet("101", "the original text, complete")
    records, rejections = run("x-v2", lines(_page(reply, quote, retweet, note, tweets=[original])))
    assert rejections == []
    by_id = {r.native_id: r for r in records}
    assert set(by_id) == {"201", "202", "203", "204"}  # included tweets are context, not records
    assert (by_id["201"].kind, by_id["201"].reply_to, by_id["201"].conversation_id) == ("reply", "x:101", "x:100")
    assert (by_id["202"].kind, by_id["202"].quote_of) == ("quote", "x:101")
    assert (by_id["203"].kind, by_id["203"].repost_of) == ("repost", "x:101")
    assert by_id["203"].metadata["repost_text"] == "the original text, complete"
    assert by_id["204"].text == long_text and by_id["204"].hashtags == ["پایان"]


def test_language_detected_only_when_the_platform_gives_none():
    records, _ = run("x-v2", lines(_page(_tweet("1", "این یک پیام آزمایشی است", lang="und"),
                                         _tweet("2", "این یک پیام آزمایشی است", lang="ar"))))  # fmt: skip
    assert [r.lang for r in records] == ["fa", "ar"]


def test_malformed_pages_and_tweets_are_rejected_with_line():
    payload = lines(
        _page(_tweet("1")),
        "{broken",
        '"a string"',
        json.dumps({"data": "nope"}),
        _page(_tweet("x1"), {"id": "3"}, _tweet("4", created_at="yesterday"), "junk", _tweet("5")),
        json.dumps({"meta": {"result_count": 0}}),  # an empty result page: nothing to say
        json.dumps({"errors": [{"title": "Not Found Error"}]}),
        json.dumps({"data": _tweet("6")}),  # a single-tweet lookup response
    )
    records, rejections = run("x-v2", payload)
    assert [r.native_id for r in records] == ["1", "5", "6"]
    assert [(r.line, r.reason.split(":")[0]) for r in rejections] == [
        (2, "invalid JSON"), (3, "expected a JSON object (an API v2 response page)"),
        (4, "field 'data'"), (5, "field 'data[0].id'"), (5, "field 'data[1].text'"),
        (5, "field 'data[2].created_at'"), (5, "data[3]"),
        (7, "X answered with errors and no posts")]  # fmt: skip
    assert [r.error for r in rejections][-1] is False, "an error page is counted, not malformed input"


def test_retry_page_gives_two_observations_for_dedupe():
    records, _ = run("x-v2", (SAMPLES / "x_v2_recording.jsonl").read_bytes())
    assert len(records) == 165  # 150 tweets + a 15-tweet page retried
    assert len({r.key for r in records}) == 150


def test_sample_recording_golden():
    records, rejections = run("x-v2", (SAMPLES / "x_v2_recording.jsonl").read_bytes())
    assert rejections == []
    kinds = {r.kind for r in records}
    assert kinds == {"post", "reply", "quote", "repost"}
    assert any(len(r.text) > 280 for r in records)  # the note_tweet
    assert {r.lang for r in records} == {"fa", "ar", "en"}
    assert all(r.author_handle for r in records)
    assert any(r.media for r in records) and any(r.urls for r in records)


def test_archive_golden():
    records, rejections = run("x-archive", (SAMPLES / "x_archive_tweets.js").read_bytes())
    assert rejections == []
    assert len(records) == 5
    first = records[0]
    assert first.key == "x:1780000000000000000" and first.metrics.likes is not None
    assert first.created_at.tzinfo is timezone.utc
    assert first.hashtags == ["خبر_فوری"]
    assert records[3].kind == "reply" and records[3].reply_to == "x:1780000000000000000"
    assert records[3].mentions == ["sara_example"]


def test_archive_shapes():
    items = [
        {"tweet": {"id_str": "10", "full_text": "RT @someone: copied", "created_at": "Wed Oct 10 20:19:24 +0000 2018",
                   "lang": "en", "favorite_count": "3", "retweet_count": "1",
                   "entities": {"urls": [{"url": "https://t.co/x", "expanded_url": "https://example.org/x"}]},
                   "extended_entities": {"media": [{"id_str": "77", "type": "video", "media_url_https": "https://p/1.jpg",
                       "video_info": {"variants": [{"bitrate": "0", "content_type": "application/x-mpegURL",
                       "url": "https://v/1.m3u8"}, {"bitrate": "832000", "content_type": "video/mp4",
                       "url": "https://v/1.mp4"}]}}]}}},
        {"tweet": {"id_str": "11", "full_text": "bad date", "created_at": "2018-10-10"}},
        {"nothing": 1},
    ]  # fmt: skip
    payload = b"window.YTD.tweets.part0 = " + json.dumps(items).encode()
    records, rejections = run("x-archive", payload)
    (record,) = records
    assert record.kind == "repost" and record.metrics.likes == 3 and record.urls == ["https://example.org/x"]
    assert record.created_at == datetime(2018, 10, 10, 20, 19, 24, tzinfo=timezone.utc)
    assert (record.media[0].type, record.media[0].url) == ("video", "https://v/1.mp4")
    assert [(r.line, r.reason.split(":")[0]) for r in rejections] == [
        (2, "field 'tweet.created_at'"), (3, "field 'tweet.id_str'")]  # fmt: skip


@pytest.mark.parametrize("payload", [b"", b"window.YTD.tweets.part0 = [", b"{}", b"window.YTD.tweets.part0 = [1, "])
def test_broken_archive_is_reported(payload):
    records, rejections = run("x-archive", payload)
    assert records == []
    assert rejections and all(r.error for r in rejections)
    assert "\n" not in rejections[-1].reason


def test_empty_archive_is_fine():
    assert run("x-archive", b"window.YTD.tweets.part0 = []") == ([], [])


def test_fast_page_decoding_is_used_and_changes_nothing():
    import io

    from crawl_assets.sources.x.normalize import _fast_page, normalize_v2

    raw = (SAMPLES / "x_v2_recording.jsonl").read_bytes()
    assert all(_fast_page(line) is not None for line in raw.splitlines())
    context = NormalizeContext(tenant="t", source="s")
    fast = list(normalize_v2(io.BytesIO(raw), name="n", context=context, validate=False))
    slow = list(normalize_v2(io.BytesIO(raw), name="n", context=context, validate=False, fast=False))
    assert fast == slow and len(fast) == 165
    odd = _page(_tweet("1", geo={"place_id": "abc"}, withheld={"copyright": True, "country_codes": ["IR"]},
                       attachments={"poll_ids": ["99"], "media_keys": []}, public_metrics={"like_count": 2**70}))
    assert _fast_page(odd.encode()) is None  # an integer orjson would make a float: the page goes the slow way
    fitting = _page(_tweet("1", geo={"place_id": "abc"}, withheld={"copyright": True, "country_codes": ["IR"]},
                           attachments={"poll_ids": ["99"]}))  # fmt: skip
    assert _fast_page(fitting.encode()).data[0].geo == {"place_id": "abc"}
    for page in (odd, fitting):
        payload = lines(page)
        assert list(normalize_v2(io.BytesIO(payload), name="n", context=context)) == list(
            normalize_v2(io.BytesIO(payload), name="n", context=context, fast=False))
