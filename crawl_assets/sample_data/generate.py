"""Deterministic synthetic sample data (no real person's data: every name, handle and id is invented).

``python -m crawl_assets.sample_data.generate`` rewrites the committed files next to this module:

- ``telegram_export/result.json``: one Telegram Desktop channel export (~200 messages: posts, replies,
  forwards from another channel, hashtags, mentions, links, media, an edited post, service messages);
- ``x_v2_recording.jsonl``: 10 API v2 search/recent pages as twarc2 writes them (~150 tweets: replies,
  quotes, retweets, a long ``note_tweet``, mentions, hashtags, media) plus one page repeated as a retry;
- ``x_archive_tweets.js``: a tiny account-archive ``tweets.js``.

Text mixes Persian (with Arabic yeh/kaf variants, ZWNJ, Persian digits, tatweel), Arabic and English so
the Persian-aware normalization has something to do. ``x_v2_pages`` also feeds the normalize benchmark.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
SEED = 20240501
START = datetime(2024, 5, 1, 6, 0, tzinfo=timezone.utc)
TEHRAN = timezone(timedelta(hours=3, minutes=30))

PERSIAN = [
    "امروز گزارش تازه‌ای درباره بازار منتشر شد",
    "می‌خواهم نظرتان را درباره این موضوع بدانم",
    "قيمت نان در تهران ۱۵٪ بالا رفت",  # Arabic yeh in قيمت
    "جلسه بعدی ساعت ۱۸:۳۰ برگزار می‌شود",
    "اين كتاب خيلي خوب است",  # Persian typed on an Arabic keyboard
    "خبــــر فوری: بارش برف در شمال کشور",  # tatweel
    "به نظر من این تصمیم درست نبود\u200c",  # trailing ZWNJ
    "گفت‌وگوی امروز با مهمان برنامه را از دست ندهید",
    "دانشجویان دانشگاه برای ۲ روز تعطیل هستند",
    "پیام‌های شما را خواندیم و پاسخ می‌دهیم",
]
ARABIC = [
    "هذا خبر عاجل من المراسل في المدينة",
    "شكرا جزيلا على المتابعة اليومية",
    "اجتماع اللجنة سيكون يوم الأحد القادم",
    "الطقس اليوم مشمس مع رياح خفيفة",
]
ENGLISH = [
    "New report on regional markets is out today",
    "Thanks everyone for the feedback on the last thread",
    "Schedule update: the next session starts at 6pm",
    "Photos from the community meetup are now online",
]
HASHTAGS = ["خبر_فوری", "خبر_فوري", "اقتصاد", "تهران", "news", "Markets", "عاجل", "meetup"]
HANDLES = ["sara_example", "ali_sample", "nika_demo", "omid_test", "layla_fake", "news_bot_demo"]
LINKS = ["https://example.org/report", "https://example.com/a/1", "https://news.example.net/x?id=7"]


def _text(rng: random.Random) -> tuple[str, str]:
    pool = rng.choices([PERSIAN, ARABIC, ENGLISH], weights=[6, 2, 2])[0]
    lang = "fa" if pool is PERSIAN else "ar" if pool is ARABIC else "en"
    return rng.choice(pool), lang


# --- Telegram Desktop export -------------------------------------------------------------------------

CHANNEL_ID = 1987654321
OTHER_CHANNEL_ID = 1777777777


def _export_dates(when: datetime) -> dict[str, str]:
    # The export's "date" is the exporter's local time (here Tehran); only date_unixtime is an instant.
    return {"date": when.astimezone(TEHRAN).strftime("%Y-%m-%dT%H:%M:%S"), "date_unixtime": str(int(when.timestamp()))}


def telegram_export(messages: int = 200, seed: int = SEED) -> dict[str, Any]:
    """A channel export document with ``messages`` messages (a few are service messages)."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    when = START
    name = "کانال نمونه"
    for message_id in range(1, messages + 1):
        when += timedelta(minutes=rng.randint(3, 90))
        base = {"id": message_id, **_export_dates(when)}
        if message_id == 1 or message_id % 50 == 0:
            action = "create_channel" if message_id == 1 else "pin_message"
            service = {"type": "service", **base, "actor": name, "actor_id": f"channel{CHANNEL_ID}", "action": action}
            if action == "pin_message":
                service["message_id"] = message_id - 1
            service.update(text="", text_entities=[])
            out.append(service)
            continue
        body, _ = _text(rng)
        entities: list[dict[str, Any]] = [{"type": "plain", "text": body}]
        if rng.random() < 0.5:
            entities += [{"type": "plain", "text": " "}, {"type": "hashtag", "text": "#" + rng.choice(HASHTAGS)}]
        if rng.random() < 0.25:
            entities += [{"type": "plain", "text": " "}, {"type": "mention", "text": "@" + rng.choice(HANDLES)}]
        if rng.random() < 0.2:
            entities += [{"type": "plain", "text": " "}, {"type": "link", "text": rng.choice(LINKS)}]
        if rng.random() < 0.1:
            entities += [{"type": "plain", "text": " "}, {"type": "text_link", "text": "لینک", "href": rng.choice(LINKS)}]
        if rng.random() < 0.1:
            entities += [{"type": "plain", "text": " 🎉"}]
        message: dict[str, Any] = {"type": "message", **base, "from": name, "from_id": f"channel{CHANNEL_ID}"}
        if rng.random() < 0.15:
            message["author"] = rng.choice(["مدیر کانال", "Editor"])
        if message_id == 7:
            edited = when + timedelta(minutes=12)
            message.update(edited=edited.astimezone(TEHRAN).strftime("%Y-%m-%dT%H:%M:%S"))
            message["edited_unixtime"] = str(int(edited.timestamp()))
        if message_id > 5 and rng.random() < 0.15:
            message["reply_to_message_id"] = rng.randint(max(2, message_id - 30), message_id - 1)
        if rng.random() < 0.08:
            message["forwarded_from"] = "کانال دیگر"
        roll = rng.random()
        if roll < 0.15:
            message.update(photo=f"photos/photo_{message_id}@{when:%d-%m-%Y_%H-%M-%S}.jpg")
            message.update(photo_file_size=rng.randint(20_000, 400_000), width=1280, height=720)
        elif roll < 0.2:
            message.update(file=f"video_files/clip_{message_id}.mp4", media_type="video_file", mime_type="video/mp4")
            message.update(file_size=rng.randint(1_000_000, 9_000_000), duration_seconds=rng.randint(5, 120))
            message.update(width=640, height=360)
        message["text"] = [
            e["text"] if e["type"] == "plain" else {k: v for k, v in e.items()} for e in entities
        ]
        message["text_entities"] = entities
        if rng.random() < 0.3:
            message["reactions"] = [{"type": "emoji", "count": rng.randint(1, 40), "emoji": rng.choice("👍🔥❤")}]
        out.append(message)
    return {"name": name, "type": "public_channel", "id": CHANNEL_ID, "messages": out}


# --- X API v2 pages ------------------------------------------------------------------------------------

USERS = [(str(9000 + i), handle, handle.replace("_", " ").title()) for i, handle in enumerate(HANDLES)]


def _tweet_text(rng: random.Random, mentions: list[str], tags: list[str], link: str | None) -> tuple[str, dict]:
    body, lang = _text(rng)
    parts = [f"@{m}" for m in mentions] + [body] + [f"#{t}" for t in tags] + ([link] if link else [])
    text = " ".join(parts)
    entities: dict[str, Any] = {}
    position = 0
    for part in parts:
        end = position + len(part)
        if part.startswith("@"):
            user = next(u for u in USERS if u[1] == part[1:])
            entities.setdefault("mentions", []).append({"start": position, "end": end, "username": part[1:], "id": user[0]})
        elif part.startswith("#"):
            entities.setdefault("hashtags", []).append({"start": position, "end": end, "tag": part[1:]})
        elif part.startswith("http"):
            entities.setdefault("urls", []).append(
                {"start": position, "end": end, "url": "https://t.co/abc123", "expanded_url": part,
                 "display_url": part.split("//", 1)[1][:20]}
            )  # fmt: skip
        position = end + 1
    if "urls" in entities:
        text = text.replace(link or "", "https://t.co/abc123")
    return text, {"entities": entities, "lang": lang}


def x_v2_pages(tweets: int = 150, per_page: int = 15, seed: int = SEED, note_tweets: bool = True) -> Iterator[dict]:
    """Search/recent response pages (newest first) with ``includes``, as twarc2 writes them."""
    rng = random.Random(seed)
    next_id = 1790000000000000000
    when = START
    made: list[tuple[str, str]] = []  # (tweet id, author id) already published, for references
    pages = (tweets + per_page - 1) // per_page
    for page_number in range(pages):
        data: list[dict[str, Any]] = []
        media: list[dict[str, Any]] = []
        referenced: dict[str, dict[str, Any]] = {}
        for _ in range(min(per_page, tweets - page_number * per_page)):
            next_id += rng.randint(10_000, 9_000_000)
            when += timedelta(seconds=rng.randint(5, 600))
            author = rng.choice(USERS)
            mentions = rng.sample(HANDLES, k=rng.choice([0, 0, 1, 2]))
            tags = rng.sample(HASHTAGS, k=rng.choice([0, 1, 1, 2, 3]))
            link = rng.choice(LINKS) if rng.random() < 0.2 else None
            text, extra = _tweet_text(rng, mentions, tags, link)
            tweet_id = str(next_id)
            tweet: dict[str, Any] = {
                "id": tweet_id,
                "text": text,
                "author_id": author[0],
                "created_at": when.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                "conversation_id": tweet_id,
                "lang": extra["lang"],
                "edit_history_tweet_ids": [tweet_id],
                "possibly_sensitive": False,
                "reply_settings": "everyone",
                "public_metrics": {
                    "retweet_count": rng.randint(0, 50), "reply_count": rng.randint(0, 20),
                    "like_count": rng.randint(0, 300), "quote_count": rng.randint(0, 5),
                    "bookmark_count": rng.randint(0, 9), "impression_count": rng.randint(10, 20_000),
                },  # fmt: skip
            }
            if extra["entities"]:
                tweet["entities"] = extra["entities"]
            roll = rng.random()
            if made and roll < 0.15:
                parent_id, parent_author = rng.choice(made)
                tweet["referenced_tweets"] = [{"type": "replied_to", "id": parent_id}]
                tweet["in_reply_to_user_id"] = parent_author
                tweet["conversation_id"] = parent_id
            elif made and roll < 0.25:
                quoted, _ = rng.choice(made)
                tweet["referenced_tweets"] = [{"type": "quoted", "id": quoted}]
            elif made and roll < 0.4:
                original, original_author = rng.choice(made)
                handle = next(u[1] for u in USERS if u[0] == original_author)
                tweet["text"] = f"RT @{handle}: " + text[:100]
                tweet["referenced_tweets"] = [{"type": "retweeted", "id": original}]
                tweet["entities"] = {"mentions": [{"start": 3, "end": 4 + len(handle), "username": handle, "id": original_author}]}
                referenced[original] = {"id": original, "text": text, "author_id": original_author}
            if rng.random() < 0.1:
                key = f"3_{next_id}"
                tweet["attachments"] = {"media_keys": [key]}
                media.append({"media_key": key, "type": "photo", "url": f"https://pbs.example.com/media/{key}.jpg",
                              "width": 1200, "height": 800})  # fmt: skip
            if note_tweets and page_number == 2 and not data:
                long_text = " ".join(PERSIAN) + " #" + HASHTAGS[0]
                tweet["note_tweet"] = {"text": long_text, "entities": {"hashtags": [
                    {"start": len(long_text) - len(HASHTAGS[0]) - 1, "end": len(long_text), "tag": HASHTAGS[0]}]}}
                tweet["text"] = long_text[:270] + "…"
            data.append(tweet)
            made.append((tweet_id, author[0]))
        retrieved = START + timedelta(days=1, minutes=page_number)
        page: dict[str, Any] = {
            "data": list(reversed(data)),
            "includes": {"users": [{"id": u[0], "username": u[1], "name": u[2]} for u in USERS]},
            "meta": {"newest_id": data[-1]["id"], "oldest_id": data[0]["id"], "result_count": len(data),
                     "next_token": f"token{page_number + 1:04d}"},  # fmt: skip
            "__twarc": {"url": "https://api.x.com/2/tweets/search/recent?query=%23news", "version": "2.14.1",
                        "retrieved_at": retrieved.strftime("%Y-%m-%dT%H:%M:%S+00:00")},  # fmt: skip
        }
        if media:
            page["includes"]["media"] = media
        if referenced:
            page["includes"]["tweets"] = list(referenced.values())
        yield page


def x_v2_recording(seed: int = SEED) -> list[dict]:
    """The sample recording: 10 pages, the 4th repeated later as a retry (same tweets, newer counters)."""
    pages = list(x_v2_pages(150, 15, seed))
    retry = json.loads(json.dumps(pages[3]))
    retry["__twarc"]["retrieved_at"] = (START + timedelta(days=1, hours=2)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    for tweet in retry["data"]:
        tweet["public_metrics"]["like_count"] += 1
    return pages[:5] + [retry] + pages[5:]


# --- X account archive ---------------------------------------------------------------------------------


def x_archive(seed: int = SEED) -> str:
    """A tiny ``tweets.js`` (five tweets of one invented account)."""
    rng = random.Random(seed)
    items = []
    when = START
    for n in range(5):
        when += timedelta(hours=rng.randint(1, 30))
        body, lang = _text(rng)
        tweet_id = str(1780000000000000000 + n * 1_000_003)
        tweet: dict[str, Any] = {
            "edit_info": {"initial": {"editTweetIds": [tweet_id], "editableUntil": "2024-05-01T07:00:00.000Z",
                                      "editsRemaining": "5", "isEditEligible": True}},  # fmt: skip
            "retweeted": False,
            "source": '<a href="https://example.com" rel="nofollow">Sample client</a>',
            "entities": {"hashtags": [{"text": HASHTAGS[n], "indices": ["0", str(1 + len(HASHTAGS[n]))]}],
                         "symbols": [], "user_mentions": [], "urls": []},  # fmt: skip
            "display_text_range": ["0", "140"],
            "favorite_count": str(rng.randint(0, 50)),
            "id_str": tweet_id,
            "truncated": False,
            "retweet_count": str(rng.randint(0, 9)),
            "id": tweet_id,
            "created_at": when.strftime("%a %b %d %H:%M:%S +0000 %Y"),
            "favorited": False,
            "full_text": f"#{HASHTAGS[n]} {body}",
            "lang": lang,
        }
        if n == 3:
            tweet["in_reply_to_status_id_str"] = str(1780000000000000000)
            tweet["in_reply_to_screen_name"] = HANDLES[0]
            tweet["entities"]["user_mentions"] = [{"name": "Sara", "screen_name": HANDLES[0], "indices": ["0", "13"],
                                                  "id_str": "9000", "id": "9000"}]  # fmt: skip
        items.append({"tweet": tweet})
    return "window.YTD.tweets.part0 = " + json.dumps(items, ensure_ascii=False, indent=2) + "\n"


def main() -> None:
    """Rewrite the committed sample files (deterministic: the same bytes every run)."""
    (HERE / "telegram_export").mkdir(exist_ok=True)
    export = json.dumps(telegram_export(), ensure_ascii=False, indent=1)
    (HERE / "telegram_export" / "result.json").write_text(export + "\n", encoding="utf-8")
    lines = [json.dumps(page, ensure_ascii=False, separators=(",", ":")) for page in x_v2_recording()]
    (HERE / "x_v2_recording.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (HERE / "x_archive_tweets.js").write_text(x_archive(), encoding="utf-8")


if __name__ == "__main__":
    main()
