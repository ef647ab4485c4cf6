"""Inputs in the exact shapes the platforms write, built by hand for the real-world-input tests (issue 14).

Every value is invented; the field names and nesting follow each platform's public documentation:
X API v2 pages (``data``/``includes``/``errors``/``meta``), X account archive data files
(``window.YTD.<kind>.part0 = [...]``), Telegram Desktop exports (``result.json``, with and without
``date_unixtime``), Telethon ``Message.to_json()`` lines of current and older versions.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

PROBLEMS = "https://api.twitter.com/2/problems"


def x_tweet(tweet_id: str, text: str, **fields: Any) -> dict[str, Any]:
    """A tweet as requested with the usual tweet.fields (created_at, author_id, lang, public_metrics...)."""
    return {
        "id": tweet_id, "text": text, "edit_history_tweet_ids": fields.pop("edit_history_tweet_ids", [tweet_id]),
        "author_id": "2244994945", "conversation_id": tweet_id, "created_at": "2024-05-02T11:00:00.000Z",
        "lang": "en", "public_metrics": {"retweet_count": 1, "reply_count": 0, "like_count": 3, "quote_count": 0,
                                         "bookmark_count": 0, "impression_count": 40},
        **fields,
    }  # fmt: skip


def x_page(*tweets: dict[str, Any], **extra: Any) -> bytes:
    page: dict[str, Any] = {"data": list(tweets), "includes": {"users": [{"id": "2244994945", "username": "acme"}]},
                            "meta": {"result_count": len(tweets)}}
    page.update(extra)
    return json.dumps(page, ensure_ascii=False).encode()


def x_default_page(*ids_texts: tuple[str, str]) -> bytes:
    """A page as common clients get it without tweet.fields: only id, text and edit_history_tweet_ids."""
    data = [{"edit_history_tweet_ids": [i], "id": i, "text": t} for i, t in ids_texts]
    return orjson.dumps({"data": data, "meta": {"newest_id": data[0]["id"], "oldest_id": data[-1]["id"],
                                               "result_count": len(data)}})


def x_not_found(tweet_id: str) -> dict[str, Any]:
    return {"value": tweet_id, "detail": f"Could not find tweet with ids: [{tweet_id}].", "title": "Not Found Error",
            "resource_type": "tweet", "parameter": "ids", "resource_id": tweet_id,
            "type": f"{PROBLEMS}/resource-not-found"}


def x_not_authorized(tweet_id: str) -> dict[str, Any]:
    return {"value": tweet_id, "detail": f"Sorry, you are not authorized to see the Tweet with ids: [{tweet_id}].",
            "title": "Authorization Error", "resource_type": "tweet", "parameter": "ids", "resource_id": tweet_id,
            "type": f"{PROBLEMS}/not-authorized-for-resource", "section": "data"}


def archive_tweet(tweet_id: str, text: str, created: str = "Thu May 02 11:00:00 +0000 2024",
                  **fields: Any) -> dict[str, Any]:
    """One item of an account archive's tweets.js (counts are strings, as the archive writes them)."""
    tweet = {
        "edit_info": {"initial": {"editTweetIds": [tweet_id], "editableUntil": "2024-05-02T12:00:00.000Z",
                                  "editsRemaining": "5", "isEditEligible": True}},
        "retweeted": False, "source": "<a href=\"https://example.com\" rel=\"nofollow\">Sample client</a>",
        "entities": {"hashtags": [], "symbols": [], "user_mentions": [], "urls": []},
        "display_text_range": ["0", str(len(text))], "favorite_count": "2", "id_str": tweet_id, "truncated": False,
        "retweet_count": "0", "id": tweet_id, "created_at": created, "favorited": False, "full_text": text,
        "lang": "en",
    }  # fmt: skip
    tweet.update(fields)
    return {"tweet": tweet}


def archive_file(kind: str, items: list[dict[str, Any]]) -> bytes:
    return f"window.YTD.{kind}.part0 = ".encode() + json.dumps(items, indent=2, ensure_ascii=False).encode()


def export_message(message_id: int, text: str, *, unixtime: int | None = 1714548780,
                   date: str = "2024-05-01T11:03:00", **fields: Any) -> dict[str, Any]:
    """A Telegram Desktop export message; ``unixtime=None`` for exports made before date_unixtime existed."""
    message: dict[str, Any] = {"id": message_id, "type": "message", "date": date}
    if unixtime is not None:
        message["date_unixtime"] = str(unixtime)
    message.update({"from": "Sample Channel", "from_id": "channel1987654321", "text": text})
    if unixtime is not None:
        message["text_entities"] = [{"type": "plain", "text": text}]
    message.update(fields)
    return message


def export_file(*messages: dict[str, Any]) -> bytes:
    return json.dumps({"name": "Sample Channel", "type": "public_channel", "id": 1987654321,
                       "messages": list(messages)}, indent=1, ensure_ascii=False).encode()


def telethon_message(message_id: int, text: str, **fields: Any) -> dict[str, Any]:
    """``Message.to_json()`` of a channel post as Telethon 1.3x writes it (peer_id, MessageReplyHeader...)."""
    return {"_": "Message", "id": message_id, "peer_id": {"_": "PeerChannel", "channel_id": 1987654321},
            "date": "2024-05-01T11:03:00+00:00", "message": text, "out": False, "mentioned": False,
            "media_unread": False, "silent": False, "post": True, "from_scheduled": False, "legacy": False,
            "edit_hide": False, "pinned": False, "noforwards": False, "from_id": None, "fwd_from": None,
            "via_bot_id": None, "reply_to": None, "media": None, "reply_markup": None, "entities": [],
            "views": 120, "forwards": 3, "replies": None, "edit_date": None, "post_author": None,
            "grouped_id": None, "reactions": None, "restriction_reason": [], "ttl_period": None, **fields}


def lines(*objects: dict[str, Any] | bytes) -> bytes:
    """JSON lines (stdlib json: integers beyond 64 bits are written as they are, as careless producers do)."""
    return b"\n".join(o if isinstance(o, bytes) else json.dumps(o, ensure_ascii=False).encode() for o in objects) + b"\n"


def envelope(endpoint: str, response: Any, **crawl: str) -> dict[str, Any]:
    """A raw line of a REST source: the answer as received, wrapped with what it does not say."""
    return {"crawl": {"endpoint": endpoint, **crawl, "retrieved_at": "2026-11-30T04:00:00+00:00"}, "response": response}


def intercom_v1_conversation(conv_id: str, opening: str, *parts: dict[str, Any]) -> dict[str, Any]:
    """``GET /conversations/{id}`` of the Intercom API before 2.0: the opening message under
    ``conversation_message`` (no ``source``), ``user``/``customers``/``assignee`` instead of ``contacts``/
    ``admin_assignee_id``."""
    return {
        "type": "conversation", "id": conv_id, "created_at": 1400850973, "updated_at": 1400857494,
        "waiting_since": 1400857494, "snoozed_until": None,
        "conversation_message": {"type": "conversation_message", "id": f"{conv_id}001", "subject": "",
                                 "body": f"<p>{opening}</p>", "author": {"type": "user", "id": "5310d8e7598c9a0b24000002"},
                                 "attachments": [], "url": None},
        "user": {"type": "user", "id": "5310d8e7598c9a0b24000002"},
        "customers": [{"type": "user", "id": "5310d8e7598c9a0b24000002"}],
        "assignee": {"type": "admin", "id": "25"}, "open": True, "state": "open", "read": True,
        "tags": {"type": "tag.list", "tags": []},
        "conversation_parts": {"type": "conversation_part.list", "conversation_parts": list(parts),
                               "total_count": len(parts)},
    }  # fmt: skip


def intercom_part(part_id: str, body: str | None, created: int, *, author: tuple[str, str] = ("admin", "25"),
                  **fields: Any) -> dict[str, Any]:
    """One conversation part (the same in both API generations)."""
    return {"type": "conversation_part", "id": part_id, "part_type": fields.pop("part_type", "comment"),
            "body": body, "created_at": created, "updated_at": fields.pop("updated_at", created),
            "notified_at": created, "assigned_to": None, "author": {"type": author[0], "id": author[1]},
            "attachments": [], **fields}


def intercom_v1_notification(conversation: dict[str, Any]) -> dict[str, Any]:
    """A webhook delivery of the API before 2.0 carrying a conversation (topic conversation.user.created)."""
    return {"type": "notification_event", "app_id": "wsa", "id": "notif_0a1b2c", "topic": "conversation.user.created",
            "data": {"type": "notification_event_data", "item": conversation}, "links": {},
            "delivery_status": "pending", "delivery_attempts": 1, "delivered_at": 0, "first_sent_at": 1400850980,
            "created_at": 1400850980, "self": None}


SHIFT_USER, SHIFT_CHAT = 2**32, 2**33  # Telegram Desktop's peer ids before 2.7.2: 2**32 | user, 2**33 | chat or channel


def tdesktop_chat(chat_id: int, chat_type: str, *messages: dict[str, Any], name: str = "Sample Channel") -> bytes:
    """A single-chat ``result.json`` with the chat ``id`` exactly as given (shifted, by exports before 2.7.2)."""
    return json.dumps({"name": name, "type": chat_type, "id": chat_id, "messages": list(messages)}, indent=1,
                      ensure_ascii=False).encode()


def tdesktop_2019_message(message_id: int, text: str, date: str, **fields: Any) -> dict[str, Any]:
    """A message of Telegram Desktop 1.x-2.1 (before June 2020): local ``date``, ``edited`` always written
    (the epoch in local time when never edited), the sender (when any) as a bare user id."""
    return {"id": message_id, "type": "message", "date": date, "edited": fields.pop("edited", "1970-01-01T03:30:00"),
            **fields, "text": text}


def tdesktop_2020_message(message_id: int, text: str, date: str, **fields: Any) -> dict[str, Any]:
    """A message of Telegram Desktop 2.4-2.7.1 (September 2020 to April 2021): ``edited`` only when edited, and
    ``from_id`` (always) and ``reply_to_peer_id`` as shifted peer ids."""
    return {"id": message_id, "type": "message", "date": date, **fields, "text": text}


def x_media_tweet(tweet_id: str) -> dict[str, Any]:
    """A post with a photo, a video and a shared link, on a page whose client did not request
    ``expansions=attachments.media_keys``: the media url entities carry no ``media_key`` and ``includes`` no media."""
    text = "Two clips and a read https://t.co/Link000001 https://t.co/Phot000001 https://t.co/Vide000001"
    return x_tweet(tweet_id, text, attachments={"media_keys": [f"3_{tweet_id}", f"7_{tweet_id}"]}, entities={"urls": [
        {"start": 21, "end": 44, "url": "https://t.co/Link000001", "expanded_url": "https://example.com/read",
         "display_url": "example.com/read"},
        {"start": 45, "end": 68, "url": "https://t.co/Phot000001",
         "expanded_url": f"https://twitter.com/acme/status/{tweet_id}/photo/1", "display_url": "pic.twitter.com/Phot000001"},
        {"start": 69, "end": 92, "url": "https://t.co/Vide000001",
         "expanded_url": f"https://x.com/acme/status/{tweet_id}/video/1", "display_url": "pic.x.com/Vide000001"},
    ]})  # fmt: skip


def _archive_medium(tweet_id: str, kind: str, media_id: str, image: str, large: tuple[int, int]) -> dict[str, Any]:
    """One entry of an archive post's ``extended_entities.media`` (numbers as strings, as tweets.js writes them)."""
    sizes = {"thumb": (150, 150), "medium": (1200, 675), "small": (680, 383), "large": large}
    return {"expanded_url": f"https://twitter.com/acme/status/{tweet_id}/{kind}/1", "indices": ["10", "33"],
            "url": "https://t.co/Phot000002", "media_url": f"http://pbs.twimg.com/{image}", "id_str": media_id,
            "id": media_id, "media_url_https": f"https://pbs.twimg.com/{image}", "type": kind,
            "sizes": {name: {"w": str(w), "h": str(h), "resize": "crop" if name == "thumb" else "fit"}
                      for name, (w, h) in sizes.items()},
            "display_url": "pic.twitter.com/Phot000002"}  # fmt: skip


def archive_media_tweet(tweet_id: str) -> dict[str, Any]:
    """An archive post with a photo and a video as tweets.js writes them: every number a string."""
    photo = _archive_medium(tweet_id, "photo", "1790000000000000555", "media/GAbCdEfG.jpg", (2048, 1152))
    video = _archive_medium(tweet_id, "video", "1790000000000000556", "ext_tw_video_thumb/1/pu/img/x.jpg", (1280, 720))
    video["video_info"] = {"aspect_ratio": ["16", "9"], "duration_millis": "30030", "variants": [
        {"bitrate": "2176000", "content_type": "video/mp4", "url": "https://video.twimg.com/ext_tw_video/1/pu/vid/1280x720/a.mp4?tag=12"},
        {"content_type": "application/x-mpegURL", "url": "https://video.twimg.com/ext_tw_video/1/pu/pl/a.m3u8?tag=12"},
        {"bitrate": "832000", "content_type": "video/mp4", "url": "https://video.twimg.com/ext_tw_video/1/pu/vid/640x360/a.mp4?tag=12"},
    ]}  # fmt: skip
    return archive_tweet(tweet_id, "New video https://t.co/Phot000002", entities={
        "hashtags": [], "symbols": [], "user_mentions": [], "urls": [], "media": [photo]},
        extended_entities={"media": [photo, video]})


def discourse_post(post_id: int, topic_id: int, number: int, cooked: str, **fields: Any) -> dict[str, Any]:
    """A post of ``/posts.json`` or a topic's ``post_stream`` (the fields Discourse 3.x sends)."""
    return {"id": post_id, "name": "Bob", "username": fields.pop("username", "bob"), "avatar_template": "/user_avatar/forum/bob/{size}/1_2.png",
            "created_at": "2026-11-01T00:07:00.000Z", "cooked": cooked, "post_number": number, "post_type": 1,
            "updated_at": "2026-11-01T00:07:00.000Z", "reply_count": 0, "reply_to_post_number": None, "quote_count": 0,
            "incoming_link_count": 0, "reads": 3, "score": 0.6, "topic_id": topic_id, "topic_slug": f"topic-{topic_id}",
            "version": 1, "user_id": 107, "user_deleted": False, "deleted_at": None, "wiki": False,
            "actions_summary": [], **fields}  # fmt: skip


def discourse_quote(username: str, topic_id: int, number: int, words: str, *, other_topic: str = "") -> str:
    """``cooked`` of a quote as Discourse renders ``[quote="name, post:N, topic:T"]`` (a quote of another topic
    links that topic in its title)."""
    title = f'<a href="https://forum.example.org/t/{other_topic}/{topic_id}/{number}">{other_topic}</a>' if other_topic else f"{username}:"
    return (f'<aside class="quote no-group" data-username="{username}" data-post="{number}" data-topic="{topic_id}">\n'
            f'<div class="title">\n<div class="quote-controls"></div>\n<img loading="lazy" alt="" width="24" height="24" '
            f'src="/user_avatar/forum.example.org/{username}/48/12_2.png" class="avatar"> {title}</div>\n'
            f"<blockquote>\n<p>{words}</p>\n</blockquote>\n</aside>\n")  # fmt: skip


def discourse_onebox(url: str, title: str) -> str:
    """``cooked`` of a link alone on its line, previewed (a onebox)."""
    return (f'<aside class="onebox allowlistedgeneric" data-onebox-src="{url}">\n  <header class="source">\n'
            f'      <img src="https://example.com/favicon.ico" class="site-icon" width="32" height="32">\n'
            f'      <a href="{url}" target="_blank" rel="noopener">example.com</a>\n  </header>\n'
            f'  <article class="onebox-body">\n    <div class="aspect-image" style="--aspect-ratio:690/362;"><img '
            f'src="https://example.com/cover.png" class="thumbnail" width="690" height="362"></div>\n'
            f'<h3><a href="{url}" target="_blank" rel="noopener">{title}</a></h3>\n\n<p>{title}: a summary.</p>\n'
            "  </article>\n  <div class=\"onebox-metadata\">\n    \n    \n  </div>\n  <div style=\"clear: both\"></div>\n</aside>\n")  # fmt: skip


def hn_item(item_id: int, item_type: str, **fields: Any) -> dict[str, Any]:
    """An item of the Hacker News Firebase API, ``GET /v0/item/{id}.json`` (key order as the API sends it)."""
    return {"by": fields.pop("by", "pat"), "id": item_id, **fields, "time": fields.pop("time", 1793491500), "type": item_type}


PLAY_CSV_HEADER = ["Package Name", "App Version Code", "App Version Name", "Reviewer Language", "Device",
                   "Review Submit Date and Time", "Review Submit Millis Since Epoch", "Review Last Update Date and Time",
                   "Review Last Update Millis Since Epoch", "Star Rating", "Review Title", "Review Text",
                   "Developer Reply Date and Time", "Developer Reply Millis Since Epoch", "Developer Reply Text",
                   "Review Link"]  # fmt: skip


def play_csv(*rows: list[str], encoding: str = "utf-16") -> bytes:
    """A Play Console review export (``reviews_<package>_<yyyymm>.csv``): UTF-16 with a BOM as the Console's
    bucket holds it, or UTF-8 as re-saved."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    writer.writerows([PLAY_CSV_HEADER, *rows])
    return out.getvalue().encode(encoding)


def play_rating_row(stars: int, submitted: str, millis: int) -> list[str]:
    """The row Play writes for a rating given without a review: no title, text, reply or link."""
    return ["com.acme.app", "231", "2.3.1", "en", "a52q", submitted, str(millis), submitted, str(millis), str(stars),
            "", "", "", "", "", ""]


FORUM_CHAT = 1_700_000_001
FORUM_UNIXTIME = 1777627800  # 2026-05-01T09:30:00Z


def tdesktop_forum() -> bytes:
    """A forum supergroup's ``result.json`` as Telegram Desktop writes it: topics 3 and 6 created by service
    messages, General (no reply id), a reply chain inside topic 6, a topic edit (no reply id: no topic named)
    and a reply to a message the export lacks (2)."""

    def item(message_id: int, **fields: Any) -> dict[str, Any]:
        return {"id": message_id, "date": "2026-05-01T13:00:00", "date_unixtime": str(FORUM_UNIXTIME), **fields}

    def message(message_id: int, text: str, reply: int | None = None) -> dict[str, Any]:
        fields = {"reply_to_message_id": reply} if reply is not None else {}
        return item(message_id, type="message", **{"from": "Sara"}, from_id="user42", **fields, text=text,
                    text_entities=[{"type": "plain", "text": text}])

    def service(message_id: int, action: str, **fields: Any) -> dict[str, Any]:
        return item(message_id, type="service", actor="Sara", actor_id="user42", action=action, **fields, text="",
                    text_entities=[])

    return tdesktop_chat(FORUM_CHAT, "public_supergroup",
                         service(3, "topic_created", title="اخبار"),
                         message(4, "first in the news topic", 3),
                         message(5, "hello, General"),
                         service(6, "topic_created", title="Questions"),
                         message(7, "how do I export?", 6),
                         message(8, "Settings, Advanced", 7),
                         message(9, "thanks!", 8),
                         message(10, "an answer in General", 5),
                         service(11, "topic_edit", new_icon_emoji_id=5312536423851630001),
                         message(12, "answering a deleted message", 2),
                         message(13, "more news", 3), name="Forum fa")
