"""Telegram normalizers: ``telegram`` (one Telethon ``Message.to_json()`` per line, as the raw layer stores
them) and ``telegram-export`` (Telegram Desktop "Export chat history" ``result.json``).

Both give the same ``key`` for the same message: ``telegram:{chat_id}:{message_id}`` with the bare positive
chat id (``PeerChannel.channel_id``; the export's ``id``; a ``-100`` prefix is stripped). Service messages
(joins, pins, title changes) are not posts: they come back as ``Rejection(error=False, reason="service
message")`` so they are counted but never mistaken for bad input.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

import ijson

from crawl_assets.normalize.build import (
    SERVICE_MESSAGE,
    Batch,
    InputError,
    Item,
    as_dict,
    as_id,
    as_list,
    from_unix,
    iter_json_lines,
    media_doc,
    opt_int,
    opt_str,
    parse_instant,
)
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.persons import PersonIds
from crawl_assets.normalize.entities import Utf16Text
from crawl_assets.normalize.text import fold_tag, unique

PERSONS = PersonIds(  # from_id: a Telethon Peer or an export's "user123"; user_id: mentions, peers; actor_id: service
    owner_keys=("from_id", "actor_id", "user_id"), containers=("users",), prefixes=("user", "channel", "chat", "group"),
)

_PEER_FIELDS = {"PeerChannel": ("channel", "channel_id"), "PeerChat": ("chat", "chat_id"), "PeerUser": ("user", "user_id")}
_CHANNEL_TYPES = {"public_channel", "private_channel", "public_supergroup", "private_supergroup"}


def message_key(chat_id: str, message_id: str | int) -> str:
    """The record key of a Telegram message (same for every way it was collected)."""
    return f"telegram:{chat_id}:{message_id}"


def bare_chat_id(value: Any, field: str = "id") -> str:
    """The bare positive chat id: Bot-API style ``-100…`` channel ids and negative group ids are unwrapped."""
    if isinstance(value, str) and value.lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"field '{field}': not a chat id: {value!r}"[:200])
    if value < 0:
        digits = str(-value)
        value = int(digits[3:]) if digits.startswith("100") and len(digits) > 12 else -value
    return str(value)


def _peer(value: Any, field: str) -> tuple[str, str] | None:
    """(peer type, bare id) of a Telethon ``Peer*`` object, or None when absent."""
    if value is None:
        return None
    obj = as_dict(value)
    kind_field = _PEER_FIELDS.get(obj.get("_"))
    if kind_field is None:
        raise InputError(f"field '{field}': not a Telegram peer")
    kind, id_field = kind_field
    return kind, as_id(obj.get(id_field), f"{field}.{id_field}")


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


DELETED = "crawl_assets.deleted"


def _deletion(batch: Batch, line: int, m: dict[str, Any]) -> Item:
    """A deletion the collector observed (an id gone from a window it read completely).

    The line knows only the message and when it was seen gone, so the record is a bare tombstone:
    ``created_at`` is the observation time and ``metadata.tombstone`` is true. The
    ``normalized_records`` asset merges it onto the message's last full observation.
    """
    message_id = as_id(m.get("id"), "id")
    peer = _peer(m.get("peer_id"), "peer_id")
    if peer is None:
        raise InputError("field 'peer_id': missing")
    observed = parse_instant(m.get("observed_at"), "observed_at")
    key = message_key(peer[1], message_id)
    return batch.finish(
        {
            "key": key,
            "platform": "telegram",
            "kind": "message",
            "native_id": message_id,
            "author_id": None,
            "created_at": observed,
            "deleted": True,
            "deleted_at": observed,
            "text": "",
            "conversation_id": key,
            "metadata": {"chat_type": peer[0], "tombstone": True},
            "provenance": batch.provenance(line),
        }
    )


def _telethon_message(batch: Batch, line: int, raw: bytes, m: dict[str, Any]) -> Item:
    kind = m.get("_")
    if kind == DELETED:
        return _deletion(batch, line, m)
    if kind == "MessageService":
        return batch.reject(line, SERVICE_MESSAGE, raw, error=False)
    if kind == "MessageEmpty":
        return batch.reject(line, "empty message (deleted or inaccessible)", raw, error=False)
    if kind != "Message":
        raise InputError(f"field '_': expected 'Message', got {kind!r}"[:200])
    message_id = as_id(m.get("id"), "id")
    peer = _peer(m.get("peer_id"), "peer_id")
    if peer is None:
        raise InputError("field 'peer_id': missing")
    chat_type, chat_id = peer
    key = message_key(chat_id, message_id)
    sender = _peer(m.get("from_id"), "from_id")
    text = m.get("message") if isinstance(m.get("message"), str) else ""

    hashtags, mentions, urls, mention_ids = _telethon_entities(text, as_list(m.get("entities")))
    media, media_urls = _telethon_media(m.get("media"))
    reply = as_dict(m.get("reply_to"))
    reply_to = conversation = None
    if reply.get("_") == "MessageReplyHeader" and opt_int(reply.get("reply_to_msg_id")) is not None:
        reply_peer = _peer(reply.get("reply_to_peer_id"), "reply_to.reply_to_peer_id")
        reply_chat = reply_peer[1] if reply_peer else chat_id
        reply_to = message_key(reply_chat, reply["reply_to_msg_id"])
        top = opt_int(reply.get("reply_to_top_id"))
        conversation = message_key(reply_chat, top) if top is not None else reply_to
    fwd = as_dict(m.get("fwd_from"))
    repost_of = None
    if fwd:
        origin = _peer(fwd.get("from_id"), "fwd_from.from_id")
        post = opt_int(fwd.get("channel_post"))
        if origin and origin[0] == "channel" and post is not None:
            repost_of = message_key(origin[1], post)

    replies = as_dict(m.get("replies"))
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

    return batch.finish(
        {
            "key": key,
            "platform": "telegram",
            "kind": _kind(repost_of or fwd, reply_to, bool(m.get("post"))),
            "native_id": message_id,
            "author_id": sender[1] if sender else chat_id,
            "author_handle": None,
            "created_at": parse_instant(m.get("date"), "date"),
            "edited_at": parse_instant(m["edit_date"], "edit_date") if m.get("edit_date") is not None else None,
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
        if kind == "ReactionEmoji" and isinstance(reaction.get("emoticon"), str):
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


# --- Telegram Desktop export (result.json) ----------------------------------------------------------

_MESSAGE_PREFIXES = {"messages.item", "chats.list.item.messages.item", "left_chats.list.item.messages.item"}
_CHAT_PREFIXES = ("", "chats.list.item.", "left_chats.list.item.")
_CHAT_STARTS = {p.rstrip(".") for p in _CHAT_PREFIXES}
_CHAT_FIELDS = {p + f: f for p in _CHAT_PREFIXES for f in ("id", "type", "name")}
_STRUCTURE = {"map_key", "start_map", "end_map", "start_array", "end_array"}


def normalize_export(
    stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True
) -> Iterator[Item]:
    """Records from a Telegram Desktop export (one chat, or a full export's ``chats.list``), streamed:
    only one message is held in memory. ``line`` in rejections is the message's ordinal in the file."""
    batch = Batch("telegram-export", name, context, validate=validate)
    ordinal = 0
    chats: list[dict[str, Any]] = []
    try:
        for chat, ordinal, message in _iter_export(stream, chats):
            yield batch.guard(ordinal, message, _export_message, batch, ordinal, chat, message)
    except (ijson.JSONError, UnicodeDecodeError) as exc:  # invalid UTF-8 is invalid JSON too
        yield batch.reject(ordinal + 1, "invalid JSON, rest of file skipped: " + " ".join(str(exc).split())[:200])
        return
    if ordinal == 0 and not any("id" in chat for chat in chats):
        yield batch.reject(None, "no chat with 'messages' found: not a Telegram Desktop export (result.json)")


def _iter_export(stream: IO[bytes], chats: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], int, Any]]:
    """(chat fields, ordinal, message) for every message, building one message object at a time; every
    chat header seen is appended to ``chats`` (so an export of empty chats is told from a foreign file)."""
    chat: dict[str, Any] = {}
    chats.append(chat)
    builder: ijson.ObjectBuilder | None = None
    depth = 0
    ordinal = 0
    for prefix, event, value in ijson.parse(stream, use_float=True):
        if builder is not None:
            builder.event(event, value)
            if event in ("start_map", "start_array"):
                depth += 1
            elif event in ("end_map", "end_array"):
                depth -= 1
            if depth == 0:
                yield chat, ordinal, builder.value
                builder = None
            continue
        if prefix in _MESSAGE_PREFIXES and event not in ("end_array",):
            ordinal += 1
            if event in ("start_map", "start_array"):
                builder, depth = ijson.ObjectBuilder(), 1
                builder.event(event, value)
            else:
                yield chat, ordinal, value
        elif prefix in _CHAT_STARTS and event == "start_map":
            chat = {}
            chats.append(chat)
        elif prefix in _CHAT_FIELDS and event not in _STRUCTURE:
            chat[_CHAT_FIELDS[prefix]] = value


def _from_peer_string(value: Any) -> tuple[str, str] | None:
    """``"user123"``/``"channel123"``/``"chat123"`` of an export as (type, bare id)."""
    return PERSONS.split(value) if isinstance(value, str) else None


def _export_message(batch: Batch, ordinal: int, chat: dict[str, Any], m: Any) -> Item:
    if not isinstance(m, dict):
        raise InputError("message is not a JSON object")
    if m.get("type") == "service":
        return batch.reject(ordinal, SERVICE_MESSAGE, m, error=False)
    if m.get("type") != "message":
        raise InputError(f"field 'type': expected 'message' or 'service', got {m.get('type')!r}"[:200])
    if "id" not in chat:
        raise InputError("chat field 'id' missing (must come before 'messages')")
    chat_id = bare_chat_id(chat.get("id"))
    message_id = as_id(opt_int(m.get("id")), "id")
    key = message_key(chat_id, message_id)
    if m.get("date_unixtime") is None:
        raise InputError("field 'date_unixtime' missing (the export's 'date' is local time and cannot be used)")
    created = from_unix(m.get("date_unixtime"), "date_unixtime")
    edited = from_unix(m["edited_unixtime"], "edited_unixtime") if m.get("edited_unixtime") is not None else None

    text, parts = _export_text(m)
    hashtags, mentions, urls, mention_ids = _export_entities(parts)
    sender = _from_peer_string(m.get("from_id"))
    chat_type = opt_str(chat.get("type"))
    reply_id = opt_int(m.get("reply_to_message_id"))
    reply_to = None
    if reply_id is not None:
        reply_peer = _from_peer_string(m.get("reply_to_peer_id"))
        reply_to = message_key(reply_peer[1] if reply_peer else chat_id, reply_id)
    forwarded = opt_str(m.get("forwarded_from")) or m.get("forwarded_from_id")
    origin = _from_peer_string(m.get("forwarded_from_id"))
    origin_post = opt_int(m.get("forwarded_message_id"))
    repost_of = message_key(origin[1], origin_post) if origin and origin[0] == "channel" and origin_post else None

    metadata: dict[str, Any] = {"chat_type": chat_type, "chat_name": opt_str(chat.get("name"))}
    for field, out in (
        ("from", "from_name"),
        ("author", "post_author"),
        ("forwarded_from", "forwarded_from"),
        ("forwarded_from_id", "forwarded_from_id"),
        ("saved_from", "saved_from"),
        ("via_bot", "via_bot"),
        ("media_group_id", "grouped_id"),
    ):
        if m.get(field) is not None:
            metadata[out] = m[field]
    for field in ("poll", "location_information", "contact_information", "sticker_emoji"):
        if m.get(field) is not None:
            metadata[field] = m[field]
    if mention_ids:
        metadata["mention_user_ids"] = mention_ids
    metadata = {k: v for k, v in metadata.items() if v is not None}

    return batch.finish(
        {
            "key": key,
            "platform": "telegram",
            "kind": _kind(forwarded, reply_to, chat_type in ("public_channel", "private_channel")),
            "native_id": message_id,
            "author_id": sender[1] if sender else (chat_id if chat_type in _CHANNEL_TYPES else None),
            "author_handle": None,
            "created_at": created,
            "edited_at": edited,
            "text": text,
            "reply_to": reply_to,
            "repost_of": repost_of,
            "conversation_id": reply_to or key,
            "hashtags": hashtags,
            "mentions": mentions,
            "urls": urls,
            "media": _export_media(m),
            "metrics": {"views": opt_int(m.get("views")), "forwards": opt_int(m.get("forwards")),
                        "reactions": _export_reactions(m.get("reactions"))},
            "metadata": metadata,
            "provenance": batch.provenance(ordinal),
        }
    )


def _export_text(m: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The full text and its typed parts: ``text`` is a string or a list of strings and entity objects."""
    entities = m.get("text_entities")
    raw = m.get("text")
    if isinstance(entities, list):
        parts = [e for e in entities if isinstance(e, dict) and isinstance(e.get("text"), str)]
    elif isinstance(raw, list):
        parts = [
            {"type": "plain", "text": e} if isinstance(e, str) else e
            for e in raw
            if isinstance(e, str) or (isinstance(e, dict) and isinstance(e.get("text"), str))
        ]
    else:
        parts = []
    if isinstance(raw, str):
        return raw, parts
    return "".join(p["text"] for p in parts), parts


def _export_entities(parts: list[dict[str, Any]]) -> tuple[list[str], list[str], list[str], list[str]]:
    hashtags: list[str] = []
    mentions: list[str] = []
    urls: list[str] = []
    mention_ids: list[str] = []
    for part in parts:
        kind = part.get("type")
        if kind == "hashtag":
            hashtags.append(fold_tag(part["text"]))
        elif kind == "mention":
            mentions.append(fold_tag(part["text"]))
        elif kind == "mention_name" and opt_int(part.get("user_id")) is not None:
            mention_ids.append(str(part["user_id"]))
        elif kind == "link":
            urls.append(part["text"])
        elif kind == "text_link" and isinstance(part.get("href"), str):
            urls.append(part["href"])
    return unique(hashtags), unique(mentions), unique(urls), unique(mention_ids)


_NOT_INCLUDED = "(File not included"
_EXPORT_MEDIA_TYPES = {"video_file": "video", "voice_message": "voice", "audio_file": "audio", "video_message": "video_note"}


def _export_media(m: dict[str, Any]) -> list[dict[str, Any]]:
    media: list[dict[str, Any]] = []
    if m.get("photo") is not None:
        path = opt_str(m.get("photo"))
        media.append(
            media_doc(
                type="photo",
                mime="image/jpeg",
                size=opt_int(m.get("photo_file_size")),
                width=opt_int(m.get("width")),
                height=opt_int(m.get("height")),
                url=None if path is None or path.startswith(_NOT_INCLUDED) else path,
            )
        )
    if m.get("file") is not None or m.get("media_type") is not None:
        path = opt_str(m.get("file"))
        kind = opt_str(m.get("media_type")) or "document"
        duration = m.get("duration_seconds")
        media.append(
            media_doc(
                type=_EXPORT_MEDIA_TYPES.get(kind, kind),
                mime=opt_str(m.get("mime_type")),
                size=opt_int(m.get("file_size")),
                width=opt_int(m.get("width")),
                height=opt_int(m.get("height")),
                duration=_seconds(duration),
                url=None if path is None or path.startswith(_NOT_INCLUDED) else path,
            )
        )
    if m.get("poll") is not None:
        media.append(media_doc(type="poll"))
    return media


def _export_reactions(value: Any) -> dict[str, int] | None:
    counts: dict[str, int] = {}
    for reaction in as_list(value):
        reaction = as_dict(reaction)
        count = opt_int(reaction.get("count"))
        if count is None:
            continue
        if isinstance(reaction.get("emoji"), str):
            label = reaction["emoji"]
        elif reaction.get("document_id") is not None:
            label = f"custom:{reaction['document_id']}"
        elif reaction.get("type") == "paid":
            label = "paid"
        else:
            continue
        counts[label] = counts.get(label, 0) + count
    return counts or None
