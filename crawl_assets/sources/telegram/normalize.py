"""Telegram normalizer ``telegram``: one Telethon ``Message.to_json()`` per line, as the raw layer stores
them (``telegram-export``, Telegram Desktop's ``result.json``, is in ``normalize_export``).

Telethon JSON of the versions users still hold is read: before layer 119 (Telethon < 1.17) a message had
``to_id`` instead of ``peer_id``, ``from_id`` as a bare user id, ``reply_to_msg_id`` on the message and a
forward header with ``channel_id``/``from_id`` numbers; before layer 145 (Telethon < 1.26) a reaction
count held the emoji itself (``"reaction": "🔥"``) instead of ``ReactionEmoji``. Dates without an offset
(very old Telethon) are UTC, as Telethon always meant them.

Both give the same ``key`` for the same message: ``telegram:{chat_id}:{message_id}`` with the bare positive
chat id (``PeerChannel.channel_id``; the export's ``id``; a ``-100`` prefix is stripped). Service messages
(joins, pins, title changes) are not posts: they come back as ``Rejection(error=False, reason="service
message")`` so they are counted but never mistaken for bad input. Forum topics: ``normalize_topics.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import IO, Any

from crawl_assets.normalize.build import (
    DELETED, SERVICE_MESSAGE, Batch, InputError, Item, as_dict, as_id, as_list, iter_json_lines, media_doc, opt_int,
    opt_str, parse_instant,
)  # fmt: skip
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.persons import PersonIds
from crawl_assets.normalize.entities import Utf16Text
from crawl_assets.normalize.text import fold_tag, unique
from crawl_assets.sources.telegram import normalize_topics as topics
from crawl_assets.sources.telegram.normalize_peers import export_bare_id, export_chat_id, message_key, shifted_spellings

_PEER_FIELDS = {"PeerChannel": ("channel", "channel_id"), "PeerChat": ("chat", "chat_id"), "PeerUser": ("user", "user_id")}
_CHANNEL_TYPES = {"public_channel", "private_channel", "public_supergroup", "private_supergroup"}
_TELETHON_TYPES = {"Message", "MessageService", "MessageEmpty"}
_TELETHON = re.compile(rb'^\{\s*"_"\s*:\s*"(?:Message|MessageService|MessageEmpty)"')


def sniff_telethon(head: bytes, line: dict[str, Any] | None) -> bool:
    """Telethon's ``Message.to_json()`` lines start with their TL type name (``"_": "Message"``)."""
    if line is not None:
        kind = line.get("_")
        return isinstance(kind, str) and kind in _TELETHON_TYPES
    return bool(_TELETHON.match(head.lstrip()))


def _peer(value: Any, field: str, bare: str = "user") -> tuple[str, str] | None:
    """(peer type, bare id) of a Telethon ``Peer*`` object, or None when absent; a bare number (Telethon before
    layer 119) is a peer of type ``bare``."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return bare, str(value)
    obj = as_dict(value)
    kind_field = _PEER_FIELDS.get(obj.get("_"))
    if kind_field is None:
        raise InputError(f"field '{field}': not a Telegram peer")
    kind, id_field = kind_field
    return kind, as_id(obj.get(id_field), f"{field}.{id_field}")


def item_scope(node: dict[str, Any]) -> str | None:
    """The chat whose message ids a raw object's ids are (a message's peer, or a Desktop export's chat): message
    ids are unique per chat only, so erasure matches ``{chat}:{id}`` as the keys do."""
    for field in ("peer_id", "to_id"):
        try:
            peer = _peer(node.get(field), field)
        except InputError:
            continue
        if peer is not None:
            return peer[1]
    if isinstance(node.get("messages"), list):
        first = next((m for m in node["messages"] if isinstance(m, dict) and m.get("type") == "message"), None)
        try:
            return export_chat_id(node.get("id"), first)
        except InputError:
            return None
    return None


PERSONS = PersonIds(  # from_id: a Telethon Peer or an export's "user123"; user_id: mentions, peers; actor_id: service
    owner_keys=("from_id", "actor_id", "user_id"), containers=("users",), prefixes=("user", "channel", "chat", "group"),
    scope=item_scope, bare=export_bare_id, spellings=shifted_spellings,
)


# --- Telethon Message.to_json() -------------------------------------------------------------------


def normalize_telethon(
    stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True
) -> Iterator[Item]:
    """Records from one Telethon ``Message.to_json()`` object per line."""
    batch = Batch("telegram", name, context, validate=validate)
    for line, raw, obj in iter_json_lines(stream, batch):
        if isinstance(obj, InputError):
            yield batch.reject(line, str(obj), raw)
        elif not isinstance(obj, dict):
            yield batch.reject(line, "expected a JSON object (a Telethon Message)", raw)
        else:
            yield batch.guard(line, raw, _telethon_message, batch, line, raw, obj)


_TOMBSTONE_CHAT_TYPES = {"channel": ("channel", "supergroup"), "chat": ("chat",), "user": ("user",)}


def _deletion(batch: Batch, line: int, m: dict[str, Any]) -> Item:
    """A deletion the collector observed (an id gone from a window it read completely).

    The line knows only the message and when it was seen gone, so the record is a bare tombstone:
    ``created_at`` is the observation time and ``metadata.tombstone`` is true; ``chat_type`` is the line's (a
    line written before it was noted says only the peer: a channel's is then unknown, not guessed). The
    ``normalized_records`` asset merges it onto the message's last full observation.
    """
    message_id = as_id(m.get("id"), "id")
    peer = _peer(m.get("peer_id"), "peer_id")
    if peer is None:
        raise InputError("field 'peer_id': missing")
    observed = parse_instant(m.get("observed_at"), "observed_at")
    key = message_key(peer[1], message_id)
    metadata: dict[str, Any] = {"tombstone": True}
    chat_type = m.get("chat_type", peer[0] if peer[0] != "channel" else None)  # a channel may be a supergroup
    if chat_type is not None:
        if chat_type not in _TOMBSTONE_CHAT_TYPES[peer[0]]:
            raise InputError(f"field 'chat_type': {chat_type!r} is not a chat type of a {peer[0]} peer"[:200])
        metadata["chat_type"] = chat_type
    # an id lookup's answer says why (``not_found``: deleted; else out of reach, e.g. ``channel_private``)
    reason = m.get("reason") if isinstance(m.get("reason"), str) else None
    gone = reason in (None, "not_found")
    if reason:
        metadata["unavailable"] = reason[:40]
    return batch.finish(
        {
            "key": key,
            "platform": "telegram",
            "kind": "post" if chat_type == "channel" else "message",  # as the message's own record says
            "native_id": message_id,
            "author_id": None,
            "created_at": observed,
            "deleted": gone,
            "deleted_at": observed if gone else None,
            "text": "",
            "conversation_id": key,
            "metadata": metadata,
            "provenance": batch.provenance(line),
        }
    )


def _telethon_message(batch: Batch, line: int, raw: bytes, m: dict[str, Any]) -> Item:
    kind = m.get("_")
    if kind == DELETED:
        return _deletion(batch, line, m)
    if kind == "MessageService" and not topics.is_topic_action(m):
        return batch.reject(line, SERVICE_MESSAGE, raw, error=False)
    if kind == "MessageEmpty":
        return batch.reject(line, "empty message (deleted or inaccessible)", raw, error=False)
    if kind not in ("Message", "MessageService"):
        raise InputError(f"field '_': expected 'Message', got {kind!r}"[:200])
    message_id = as_id(m.get("id"), "id")
    peer = _peer(m.get("peer_id"), "peer_id") or _peer(m.get("to_id"), "to_id")  # to_id: Telethon < 1.17
    if peer is None:
        raise InputError("field 'peer_id': missing")
    chat_type, chat_id = peer
    key = message_key(chat_id, message_id)
    sender = _peer(m.get("from_id"), "from_id")
    if kind == "MessageService":  # a forum topic's creation or edit
        return topics.topic_record(batch, line, m, peer, sender[1] if sender else chat_id, _utc(m.get("date"), "date"))
    text = m.get("message") if isinstance(m.get("message"), str) else ""

    hashtags, mentions, urls, mention_ids = _telethon_entities(text, as_list(m.get("entities")))
    media, media_urls = _telethon_media(m.get("media"))
    reply = as_dict(m.get("reply_to"))
    reply_to = conversation = None
    topic = topics.topic_of(reply, chat_id, batch.context.topics)
    if topic is not None and topic != topics.GENERAL_TOPIC:
        conversation, reply_to = topics.topic_thread(reply, chat_id, topic)
    elif reply.get("_") == "MessageReplyHeader" and opt_int(reply.get("reply_to_msg_id")) is not None:
        reply_peer = _peer(reply.get("reply_to_peer_id"), "reply_to.reply_to_peer_id")
        reply_chat = reply_peer[1] if reply_peer else chat_id
        reply_to = message_key(reply_chat, reply["reply_to_msg_id"])
        top = opt_int(reply.get("reply_to_top_id"))
        conversation = message_key(reply_chat, top) if top is not None else reply_to
    elif opt_int(m.get("reply_to_msg_id")) is not None:  # Telethon < 1.17: the replied id on the message
        reply_to = conversation = message_key(chat_id, m["reply_to_msg_id"])
    fwd = as_dict(m.get("fwd_from"))
    repost_of = None
    if fwd:
        origin = _peer(fwd.get("from_id"), "fwd_from.from_id")
        if opt_int(fwd.get("channel_id")) is not None:  # Telethon < 1.17: the origin channel as a number
            origin = ("channel", str(fwd["channel_id"]))
        post = opt_int(fwd.get("channel_post"))
        if origin and origin[0] == "channel" and post is not None:
            repost_of = message_key(origin[1], post)

    replies = as_dict(m.get("replies"))
    if chat_type == "channel" and not m.get("post"):  # a channel's messages are posts; a supergroup's are not
        chat_type = "supergroup"
    metadata: dict[str, Any] = {"chat_type": chat_type}
    for field in ("post_author", "grouped_id", "via_bot_id", "pinned", "silent", "noforwards", "edit_hide"):
        if m.get(field) not in (None, False):
            metadata[field] = m[field]
    if fwd:
        metadata["forwarded_from"] = _forward_summary(fwd)
    if mention_ids:
        metadata["mention_user_ids"] = mention_ids
    if replies.get("channel_id") is not None:
        metadata["comments_chat_id"] = str(replies["channel_id"])
    if topic is not None:
        metadata.update(topics.topic_metadata(topic, chat_id, batch.context.topics))

    return batch.finish(
        {
            "key": key,
            "platform": "telegram",
            "kind": _kind(repost_of or fwd, reply_to, bool(m.get("post"))),
            "native_id": message_id,
            "author_id": sender[1] if sender else chat_id,
            "author_handle": None,
            "created_at": _utc(m.get("date"), "date"),
            "edited_at": _utc(m["edit_date"], "edit_date") if m.get("edit_date") is not None else None,
            "text": text,
            "reply_to": reply_to,
            "repost_of": repost_of,
            "conversation_id": conversation or key,
            "hashtags": hashtags,
            "mentions": mentions,
            "urls": unique(urls + media_urls),
            "media": media,
            "metrics": {
                "views": opt_int(m.get("views")),
                "forwards": opt_int(m.get("forwards")),
                "replies": opt_int(replies.get("replies")),
                "reactions": _telethon_reactions(m.get("reactions")),
            },
            "metadata": metadata,
            "provenance": batch.provenance(line),
        }
    )


def _utc(value: Any, field: str) -> datetime:
    """A Telethon date: ISO 8601 with an offset, or without one (UTC, as very old Telethon wrote it)."""
    if isinstance(value, str) and len(value) >= 19 and value[10] in "T " and value[19:].strip("0123456789.") == "":
        try:
            return datetime.fromisoformat(value).replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    return parse_instant(value, field)


def _kind(forwarded: Any, reply_to: str | None, post: bool) -> str:
    if forwarded:
        return "repost"
    if reply_to:
        return "reply"
    return "post" if post else "message"


def _telethon_entities(text: str, entities: list[Any]) -> tuple[list[str], list[str], list[str], list[str]]:
    """Hashtags, mentions, URLs and mentioned user ids from entities (offsets in UTF-16 code units)."""
    hashtags: list[str] = []
    mentions: list[str] = []
    urls: list[str] = []
    mention_ids: list[str] = []
    if not entities:
        return hashtags, mentions, urls, mention_ids
    sliced = Utf16Text(text)
    for entity in entities:
        if not isinstance(entity, dict):
            continue
        kind = entity.get("_")
        if kind == "MessageEntityTextUrl":
            if isinstance(entity.get("url"), str):
                urls.append(entity["url"])
            continue
        if kind == "MessageEntityMentionName":
            if opt_int(entity.get("user_id")) is not None:
                mention_ids.append(str(entity["user_id"]))
            continue
        part = sliced.slice(entity.get("offset"), entity.get("length"))
        if kind == "MessageEntityHashtag":
            hashtags.append(fold_tag(part))
        elif kind == "MessageEntityMention":
            mentions.append(fold_tag(part))
        elif kind == "MessageEntityUrl" and part:
            urls.append(part)
    return unique(hashtags), unique(mentions), unique(urls), unique(mention_ids)


def _largest_photo_size(sizes: list[Any]) -> dict[str, Any]:
    best: dict[str, Any] = {}
    for size in sizes:
        size = as_dict(size)
        if opt_int(size.get("w")) and (opt_int(size.get("w")) or 0) >= (opt_int(best.get("w")) or 0):
            best = size
    progressive = [opt_int(n) for n in as_list(best.get("sizes"))]  # PhotoSizeProgressive: bytes per step
    if best.get("size") is None and any(progressive):
        best = {**best, "size": max(n for n in progressive if n is not None)}
    return best


def _telethon_media(value: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Media objects (and URLs of web page previews) from a Telethon ``MessageMedia*``."""
    media = as_dict(value)
    kind = media.get("_")
    if not kind:
        return [], []
    if kind == "MessageMediaPhoto":
        photo = as_dict(media.get("photo"))
        size = _largest_photo_size(as_list(photo.get("sizes")))
        sizes = opt_int(size.get("size"))
        return [
            media_doc(
                type="photo",
                id=str(photo["id"]) if opt_int(photo.get("id")) is not None else None,
                mime="image/jpeg" if photo else None,
                size=sizes,
                width=opt_int(size.get("w")),
                height=opt_int(size.get("h")),
            )
        ], []
    if kind == "MessageMediaDocument":
        doc = as_dict(media.get("document"))
        item: dict[str, Any] = {
            "type": "document",
            "id": str(doc["id"]) if opt_int(doc.get("id")) is not None else None,
            "mime": opt_str(doc.get("mime_type")),
            "size": opt_int(doc.get("size")),
        }
        for attr in as_list(doc.get("attributes")):
            attr = as_dict(attr)
            name = attr.get("_")
            if name == "DocumentAttributeVideo":
                item.update(type="video_note" if attr.get("round_message") else "video")
                item.update(width=opt_int(attr.get("w")), height=opt_int(attr.get("h")))
                item["duration"] = _seconds(attr.get("duration"))
            elif name == "DocumentAttributeAudio":
                item.update(type="voice" if attr.get("voice") else "audio", duration=_seconds(attr.get("duration")))
            elif name == "DocumentAttributeSticker":
                item["type"] = "sticker"
            elif name == "DocumentAttributeAnimated":
                item["type"] = "animation"
            elif name == "DocumentAttributeImageSize" and "width" not in item:
                item.update(width=opt_int(attr.get("w")), height=opt_int(attr.get("h")))
        return [media_doc(**item)], []
    if kind == "MessageMediaWebPage":
        page = as_dict(media.get("webpage"))
        url = opt_str(page.get("url"))
        page_id = str(page["id"]) if opt_int(page.get("id")) is not None else None
        return [media_doc(type="webpage", id=page_id, url=url)], ([url] if url else [])
    short = kind.removeprefix("MessageMedia").lower() or "unknown"
    return [media_doc(type=short)], []


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _telethon_reactions(value: Any) -> dict[str, int] | None:
    results = as_list(as_dict(value).get("results"))
    counts: dict[str, int] = {}
    for result in results:
        result = as_dict(result)
        reaction = as_dict(result.get("reaction"))
        count = opt_int(result.get("count"))
        kind = reaction.get("_")
        if count is None:
            continue
        if isinstance(result.get("reaction"), str):  # Telethon < 1.26: the emoji itself
            label = result["reaction"]
        elif kind == "ReactionEmoji" and isinstance(reaction.get("emoticon"), str):
            label = reaction["emoticon"]
        elif kind == "ReactionCustomEmoji":
            label = f"custom:{reaction.get('document_id')}"
        elif kind == "ReactionPaid":
            label = "paid"
        else:
            continue
        counts[label] = counts.get(label, 0) + count
    return counts or None


def _forward_summary(fwd: dict[str, Any]) -> dict[str, Any]:
    origin = None
    try:
        origin = _peer(fwd.get("from_id"), "fwd_from.from_id")
    except InputError:
        pass
    summary = {
        "from_type": origin[0] if origin else None,
        "from_id": origin[1] if origin else None,
        "from_name": opt_str(fwd.get("from_name")),
        "channel_post": opt_int(fwd.get("channel_post")),
        "post_author": opt_str(fwd.get("post_author")),
        "date": opt_str(fwd.get("date")),
    }
    return {k: v for k, v in summary.items() if v is not None}
