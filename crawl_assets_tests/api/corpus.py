"""Generated X API v2 pages (as twarc2 writes them) for the API tests: shapes the assertions need (a rising
hashtag, Persian spellings, a thread across two sources with a parent never collected, an edit chain, a
deletion, mentions), plus bulk from ``sample_data.generate.x_v2_pages``. Invented people and ids only."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import orjson

from crawl_assets.sample_data.generate import x_v2_pages

ZWNJ = "\u200c"
USERS = {"501": "analyst_a", "502": "analyst_b", "503": "reporter_c", "504": "bot_d"}
DAY0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
TREND_UNTIL = "2026-03-06T00:00:00Z"  # the current window is 2026-03-05
RISING, STEADY, NEW = "انتخابات", "اقتصاد", "زلزله"
SECRET = "رمزمحرمانه"  # only in the rival tenants' records


def _tweet(tid: int, author: str, when: datetime, text: str, **extra: Any) -> dict[str, Any]:
    tags = [w[1:] for w in text.split() if w.startswith("#")]
    handles = [w[1:] for w in text.split() if w.startswith("@")]
    entities: dict[str, Any] = {}
    if tags:
        entities["hashtags"] = [{"start": text.index("#" + t), "end": text.index("#" + t) + len(t) + 1, "tag": t}
                                for t in tags]
    if handles:
        entities["mentions"] = [{"start": text.index("@" + h), "end": text.index("@" + h) + len(h) + 1, "username": h}
                                for h in handles]
    tweet = {"id": str(tid), "text": text, "author_id": author, "created_at": when.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
             "conversation_id": str(tid), "lang": "fa", "edit_history_tweet_ids": [str(tid)],
             "public_metrics": {"retweet_count": 0, "reply_count": 0, "like_count": tid % 7, "quote_count": 0}}
    if entities:
        tweet["entities"] = entities
    tweet.update(extra)
    return tweet


def _page(tweets: list[dict[str, Any]], n: int, errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    page: dict[str, Any] = {
        "data": tweets, "includes": {"users": [{"id": i, "username": h, "name": h.title()} for i, h in USERS.items()]},
        "meta": {"result_count": len(tweets)},
        "__twarc": {"url": "https://api.x.com/2/tweets/search/recent", "version": "2.14.1",
                    "retrieved_at": "2026-03-07T00:00:00+00:00"}}
    if errors:
        page["errors"] = errors
    return page


def main_source() -> list[dict[str, Any]]:
    """Source ``gen-a`` of tenant ``demo``."""
    tid = 1800000000000000000
    tweets = []
    for day in range(5):
        when = DAY0 + timedelta(days=day, hours=8)
        rising = 15 if day == 4 else 1
        for i in range(10):
            tid += 1
            tweets.append(_tweet(tid, "504", when + timedelta(minutes=i), f"گزارش روزانه بازار {i} #{STEADY}"))
        for i in range(rising):
            tid += 1
            tweets.append(_tweet(tid, "503", when + timedelta(minutes=20 + i), f"خبر تازه {i} #{RISING} @analyst_b"))
        if day == 4:
            for i in range(5):
                tid += 1
                tweets.append(_tweet(tid, "502", when + timedelta(minutes=40 + i), f"لرزش شدید {i} #{NEW}"))
    when = DAY0 + timedelta(days=2, hours=12)
    spellings = [f"دانش{ZWNJ}آموزان مدرسه امروز آمدند", "دانشآموزان مدرسه دیروز رفتند", "دانش آموزان مدرسه فردا",
                 "دانشگاه تهران باز شد"]
    tweets += [_tweet(9300 + i, "501", when + timedelta(minutes=i), t) for i, t in enumerate(spellings)]
    # A thread rooted in source gen-b (9001): 9002 replies to it, 9003 to 9002, 9004 to 9998 (never collected).
    t0 = DAY0 + timedelta(days=1, hours=10)
    tweets += [
        _tweet(9002, "502", t0 + timedelta(minutes=1), "پاسخ اول @analyst_a", conversation_id="9001",
               referenced_tweets=[{"type": "replied_to", "id": "9001"}], in_reply_to_user_id="501"),
        _tweet(9003, "503", t0 + timedelta(minutes=2), "پاسخ دوم @analyst_b", conversation_id="9001",
               referenced_tweets=[{"type": "replied_to", "id": "9002"}], in_reply_to_user_id="502"),
        _tweet(9004, "504", t0 + timedelta(minutes=3), "پاسخ به پیامی که نداریم", conversation_id="9001",
               referenced_tweets=[{"type": "replied_to", "id": "9998"}]),
        _tweet(9005, "502", t0 + timedelta(minutes=4), "نقل قول از ریشه", referenced_tweets=[{"type": "quoted", "id": "9001"}]),
        # An edit chain: 9101 edited into 9102.
        _tweet(9101, "501", t0 + timedelta(hours=1), "نسخه اول متن"),
        _tweet(9102, "501", t0 + timedelta(hours=2), "نسخه دوم متن", edit_history_tweet_ids=["9101", "9102"]),
        # Deleted later (the errors below).
        _tweet(9201, "503", t0 + timedelta(hours=3), "این پیام پاک می شود"),
    ]
    gone = {"value": "9201", "detail": "Could not find tweet with ids: [9201].", "title": "Not Found Error",
            "resource_type": "tweet", "parameter": "ids", "resource_id": "9201",
            "type": "https://api.twitter.com/2/problems/resource-not-found"}
    return [_page(tweets[i:i + 50], i) for i in range(0, len(tweets), 50)] + [_page([], 99, [gone])]


def second_source() -> list[dict[str, Any]]:
    """Source ``gen-b`` of tenant ``demo``: the thread's root, and bulk generated posts."""
    root = _tweet(9001, "501", DAY0 + timedelta(days=1, hours=10), "ریشه گفتگو درباره #انتخابات")
    return [_page([root], 0), *x_v2_pages(tweets=300, per_page=50, seed=7, note_tweets=False)]


def rival_source(tenant: str) -> list[dict[str, Any]]:
    """A rival tenant's posts: the same author handle and hashtags as ``demo``'s, and a secret word."""
    when = DAY0 + timedelta(days=4, hours=9)
    tweets = [_tweet(9700 + i, "501", when + timedelta(minutes=i), f"{SECRET} {tenant} #{RISING} #محرمانه @analyst_b",
                     conversation_id="9001", referenced_tweets=[{"type": "replied_to", "id": "9002"}])
              for i in range(20)]
    return [_page(tweets, 0)]


def jsonl(pages: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(p) + b"\n" for p in pages)
