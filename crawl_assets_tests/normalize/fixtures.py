"""Every real-world input shape of issues 14 and 29 as one file each (our own data in the platforms' shapes).

Used by the CLI-vs-pipeline agreement test and as fuzz seeds (``crawl_assets_tests/fuzz/seeds.py``).
"""

from __future__ import annotations

import codecs
import gzip
import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from crawl_assets_tests.normalize.helpers import SAMPLES
from crawl_assets_tests.normalize.shapes import (
    archive_file, archive_media_tweet, archive_tweet, discourse_onebox, discourse_post, discourse_quote, envelope,
    export_file, export_message, hn_item, intercom_part, intercom_v1_conversation, intercom_v1_notification, lines,
    play_csv, play_rating_row, SHIFT_CHAT, SHIFT_USER, tdesktop_2019_message, tdesktop_2020_message, tdesktop_chat,
    telethon_message, x_default_page, x_media_tweet, x_not_authorized, x_not_found, x_page, x_tweet,
)  # fmt: skip

BAD = b"\xff\xfe"
V1, V2, V3 = "1790000000000000001", "1790000000000001000", "1790000000000002000"


@dataclass(frozen=True)
class Fixture:
    fmt: str
    data: bytes
    options: dict[str, Any] = field(default_factory=dict)  # source options: timezone, languages


def _broken(payload: bytes, marker: str) -> bytes:
    encoded = marker.encode()
    return payload.replace(encoded, encoded[:3] + BAD + encoded[3:], 1)


def _edits() -> bytes:
    def version(tweet_id: str, history: list[str], text: str, retrieved: str) -> dict[str, Any]:
        page = json.loads(x_page(x_tweet(tweet_id, text, edit_history_tweet_ids=history)))
        page["__twarc"] = {"retrieved_at": retrieved}
        return page

    return lines(version(V3, [V1, V2, V3], "final", "2024-05-02T12:00:00+00:00"),
                 version(V1, [V1], "first", "2024-05-02T11:00:10+00:00"),
                 version(V2, [V1, V2], "second", "2024-05-02T11:30:00+00:00"))


def _discourse() -> bytes:
    post = {"id": 9, "username": "bob", "user_id": 107, "created_at": "2026-11-01T00:07:00.000Z",
            "updated_at": "2026-11-01T00:07:00.000Z", "post_number": 2, "post_type": 1, "topic_id": 1001,
            "reply_to_post_number": None, "version": 1, "deleted_at": None, "actions_summary": [],
            "cooked": '<p><img src="/uploads/default/original/1X/def456.png" alt="image" width="500" height="300"></p>'}
    return lines({"crawl": {"endpoint": "posts", "host": "forum.example.org",
                            "retrieved_at": "2026-11-30T04:00:00+00:00"}, "response": {"latest_posts": [post]}})


def _hackernews() -> bytes:
    hits = [{"objectID": "41000000", "created_at": "2026-11-01T00:01:00Z", "author": "p", "title": "Poll: Tabs?",
             "points": 4, "num_comments": 1, "story_id": 41000000, "_tags": ["poll", "author_p", "story_41000000"]},
            {"objectID": "41000001", "created_at": "2026-11-01T00:01:00Z", "author": "p", "story_text": "Tabs",
             "points": 3, "story_id": 41000000, "parent_id": 41000000, "_tags": ["pollopt", "author_p"]}]
    return lines({"crawl": {"endpoint": "search_by_date", "query": "poll", "tags": "(poll,pollopt)",
                            "retrieved_at": "2026-11-30T04:00:00+00:00"}, "response": {"hits": hits}})


def _old_telethon() -> bytes:
    old = {"_": "Message", "id": 40, "to_id": {"_": "PeerChannel", "channel_id": 1987654321},
           "date": "2019-03-01T10:00:00", "message": "old shape", "post": False, "from_id": 777,
           "reply_to_msg_id": 39, "fwd_from": {"_": "MessageFwdHeader", "channel_id": 1111111111, "channel_post": 12},
           "reactions": {"_": "MessageReactions", "results": [{"_": "ReactionCount", "reaction": "🔥", "count": 5}]}}
    return lines(old, telethon_message(41, "current shape"))


def _intercom_v1() -> bytes:
    reply = intercom_part("4412", "<p>Which browser?</p>", 1400857494)
    tagged = intercom_part("4413", "<p>Chrome</p>", 1400857600, author=("user", "5310d8e7598c9a0b24000002"),
                           updated_at=1400859000)
    redacted = intercom_part("4414", "<p>my card number</p>", 1400857700, updated_at=1400858000, redacted=True)
    answer = intercom_v1_conversation("147", "Hi, the export button does nothing", reply, tagged, redacted)
    hook = intercom_v1_notification(intercom_v1_conversation("148", "Where is my invoice?"))
    return lines(*(envelope("conversation", r, workspace="wsa") for r in (answer, hook)))


def _shifted_exports() -> tuple[bytes, bytes]:
    """One channel's export by Telegram Desktop of 2019 and of 2020 (shifted peer ids)."""
    channel = SHIFT_CHAT + 1447061072
    of_2019 = tdesktop_chat(channel, "public_channel",
                            tdesktop_2019_message(100, "Launch day", "2019-05-01T12:00:00", author="Mina"),
                            tdesktop_2019_message(101, "Update: fixed", "2019-05-01T13:00:00", reply_to_message_id=100,
                                                  edited="2019-05-01T13:30:00"))
    of_2020 = tdesktop_chat(SHIFT_CHAT + 1147061072, "public_supergroup",
                            tdesktop_2020_message(5, "see the post", "2021-01-10T10:00:00", **{"from": "Reza"},
                                                  from_id=SHIFT_USER + 777000111, reply_to_message_id=100,
                                                  reply_to_peer_id=channel),
                            tdesktop_2020_message(6, "thanks", "2021-01-10T10:01:00", **{"from": "Sample Channel"},
                                                  from_id=channel, reply_to_message_id=5), name="Sample Chat")
    return of_2019, of_2020


def _discourse_quotes() -> bytes:
    quoting = discourse_post(30, 1001, 3, discourse_quote("alice", 1002, 2, "Elsewhere", other_topic="topic-1002")
                             + "<p>Same here</p>" + discourse_onebox("https://example.com/article", "Article title")
                             + '<p><img src="/images/emoji/twitter/smile.png?v=12" title=":smile:" class="emoji" '
                             'alt=":smile:"></p>')
    return lines(*(envelope("topic", {"id": t, "title": f"Topic {t}", "slug": f"topic-{t}", "category_id": 5,
                                      "post_stream": {"posts": posts}}, host="forum.example.org")
                   for t, posts in ((1001, [quoting, discourse_post(20, 1001, 2, "<p>Here</p>")]),
                                    (1002, [discourse_post(21, 1002, 2, "<p>Elsewhere</p>")]))))


def _play_ratings(encoding: str) -> bytes:
    review = ["com.acme.app", "231", "2.3.1", "en", "a52q", "2024-02-01T10:00:00Z", "1706781600000", "2024-02-01T10:00:00Z",
              "1706781600000", "5", "", "Love it", "", "", "", "https://play.google.com/console/developers/1/app/2/"
              "user-feedback/review-details?reviewId=gp:AOqpTOH9"]  # fmt: skip
    return play_csv(play_rating_row(4, "2024-02-01T09:00:00Z", 1706778000000), review,
                    play_rating_row(1, "2024-02-02T09:00:00Z", 1706864400000), encoding=encoding)


@cache
def fixtures() -> dict[str, Fixture]:
    """Every fixture whose format is installed (a source type may be uninstalled: its shapes are then skipped)."""
    from crawl_assets.core import catalog

    installed = set(catalog.catalog().formats())
    return {name: f for name, f in _all_fixtures().items() if f.fmt in installed}


def _all_fixtures() -> dict[str, Fixture]:
    x_lines = (SAMPLES / "x_v2_recording.jsonl").read_bytes()
    export = (SAMPLES / "telegram_export" / "result.json").read_bytes()
    three = archive_file("tweets", [archive_tweet(V1, "first post here"), archive_tweet(V2, "second post here"),
                                    archive_tweet(V3, "third post here")])
    old_export = export_file(
        export_message(10, "Guten Morgen", unixtime=None, date="2019-05-01T12:34:56", from_id=123456),
        export_message(11, "Korrigiert", unixtime=None, date="2019-12-01T09:00:00", edited="2019-12-01T09:05:00"))
    huge = json.dumps(telethon_message(7, "big views", views=2**70)).encode() + b"\n"
    poll = {"question": "Which?", "total_voters": 2**70, "answers": []}
    return {
        "x-v2 recording": Fixture("x-v2", x_lines),
        "1 truncated gzip": Fixture("x-v2", gzip.compress(x_lines)[: len(gzip.compress(x_lines)) // 2]),
        "2 invalid utf-8 in tweets.js": Fixture("x-archive", _broken(three, "second post")),
        "2 invalid utf-8 in result.json": Fixture("telegram-export", _broken(export_file(
            export_message(2, "سلام دوستان"), export_message(3, "خبر فوری امروز")), "خبر فوری")),
        "2 invalid utf-8 in an x-v2 page": Fixture("x-v2", lines(_broken(x_page(
            x_tweet(V1, "one"), x_tweet(V2, "two words")), "two words"))),
        "3 counter beyond 64 bits": Fixture("telegram", huge),
        "3 metadata integer beyond 64 bits": Fixture("telegram-export", export_file(export_message(2, "vote", poll=poll))),
        "4 gzip export": Fixture("telegram-export", gzip.compress(export)),
        "5 BOM": Fixture("x-archive", codecs.BOM_UTF8 + three),
        "6 default fields": Fixture("x-v2", lines(x_default_page((V1, "Hello"), (V2, "Second one")))),
        "7 errors without data": Fixture("x-v2", lines({"errors": [x_not_found(V1), x_not_authorized(V2)]})),
        "8 deleted-tweets.js": Fixture("x-archive", archive_file("deleted_tweets", [
            archive_tweet(V1, "taken back", deleted_at="Fri May 03 09:30:00 +0000 2024")])),
        "8 like.js refused": Fixture("x-archive", archive_file("like", [{"like": {"tweetId": V1, "fullText": "x"}}])),
        "9 edits": Fixture("x-v2", _edits()),
        "10 export without date_unixtime": Fixture("telegram-export", old_export),
        "10 same, with timezone": Fixture("telegram-export", old_export, {"timezone": "Europe/Berlin"}),
        "11 older telethon": Fixture("telegram", _old_telethon()),
        "12 html entities": Fixture("x-v2", lines(x_page(x_tweet(V1, "R&amp;D &gt; all")))),
        "13 discourse image only": Fixture("discourse", _discourse()),
        "14 hacker news poll option": Fixture("hackernews", _hackernews()),
        "14 archive conversation": Fixture("x-archive", archive_file("tweets", [
            archive_tweet(V1, "root"), archive_tweet(V2, "reply", in_reply_to_status_id_str=V1)])),
        "15 wrong format": Fixture("x-v2", export),
        "16 languages option": Fixture("telegram", lines(telethon_message(1, "Crash on Startup")), {"languages": "en,fa"}),
        "29.1+12 intercom before 2.0, redacted and tagged parts": Fixture("intercom", _intercom_v1()),
        "29.2 export of 2019, shifted chat id": Fixture("telegram-export", _shifted_exports()[0], {"timezone": "UTC"}),
        "29.3 archive with its owner's account id": Fixture("x-archive", three, {"account_id": "7700112233"}),
        "29.14 x media without includes.media": Fixture("x-v2", lines(x_page(x_media_tweet(V1)))),
        "29.14 archive media sizes": Fixture("x-archive", archive_file("tweets", [archive_media_tweet(V1)])),
        "29.4 discourse quote, link preview, emoji": Fixture("discourse", _discourse_quotes()),
        "29.5 hacker news code block": Fixture("hackernews", lines(envelope("search_by_date", {"hits": [{
            "objectID": "41000010", "created_at": "2026-11-01T00:05:00Z", "author": "coder", "story_id": 41000000,
            "parent_id": 41000000, "_tags": ["comment", "author_coder", "story_41000000"],
            "comment_text": "Try:<p><pre><code>  def f(x):\n      return x\n</code></pre>\nDone."}]},
            query="code", tags="(story,comment)"))),
        "29.15 hacker news firebase items": Fixture("hackernews", lines(
            hn_item(41000100, "story", descendants=1, kids=[41000101], score=12, title="Show HN: A tiny queue",
                    url="https://example.com/queue"),
            envelope("item", hn_item(41000101, "comment", parent=41000100, text="Nice.<p>Persisted?"), tags="item"),
            hn_item(41000103, "poll", parts=[41000104], score=3, title="Poll: tabs?", descendants=0),
            hn_item(41000104, "pollopt", poll=41000103, score=2, text="Tabs"),
            {"deleted": True, "id": 41000102, "parent": 41000101, "time": 1793491600, "type": "comment"})),
        "29.10 play ratings without a review (UTF-16)": Fixture("play-csv", _play_ratings("utf-16")),
        "29.10 play ratings without a review (UTF-8)": Fixture("play-csv", _play_ratings("utf-8")),
        "29.11 telethon supergroup message": Fixture("telegram", lines(telethon_message(
            12, "anyone else seeing this?", post=False, views=None, forwards=None,
            from_id={"_": "PeerUser", "user_id": 777000111}))),
        "29 telethon tombstones with and without chat_type": Fixture("telegram", lines(*(
            {"_": "crawl_assets.deleted", "peer_id": {"_": "PeerChannel", "channel_id": 1147061072}, "id": n,
             "observed_at": "2026-11-30T03:30:00+00:00", **extra}
            for n, extra in ((12, {"chat_type": "supergroup"}), (13, {"chat_type": "channel"}), (14, {}))))),
        "29.2 export of 2020, shifted sender ids": Fixture("telegram-export", _shifted_exports()[1], {"timezone": "UTC"}),
        "34.6 finglish": Fixture("telegram", lines(telethon_message(
            13, "salam bacheha, emrooz kheili khoshhal shodam ke hamatoono didam, merci"))),
    }
