"""Telegram Desktop "Export chat history" (format ``telegram-export``): ``result.json`` of one chat or of a
full export's ``chats.list``, streamed one message at a time.

Exports of every year are read: ``from_id`` as a number (exports before 2021) or ``user123``/``channel123``;
``text`` as a string or a list of strings and entity objects; ``date_unixtime`` when the export has it.
Exports before April 2021 spelled a chat's ``id`` (and, from September 2020, ``from_id`` and
``reply_to_peer_id``) as shifted peer ids (``2**33 + id`` for a channel): keys, ``reply_to`` and ``author_id``
use the bare id, as a newer export and a Telethon sync of the same chat do. Exports before June 2020 wrote
``edited`` as the epoch for a message never edited: an edit time before the message's is no edit.
Older exports have only ``date``, the exporting machine's local time: with the source's ``timezone``
option (an IANA name) it is converted to UTC and the record flagged ``local_time_converted``; without it
the message is rejected with a reason saying what to add. Forum topics: ``normalize_export_topics.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import IO, Any
from zoneinfo import ZoneInfo

import ijson

from crawl_assets.normalize.build import (
    SERVICE_MESSAGE, Batch, InputError, Item, as_dict, as_id, as_list, from_unix, media_doc, opt_int, opt_str,
)  # fmt: skip
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.damage import parse_error_text, with_flag
from crawl_assets.normalize.documents import DocumentReader
from crawl_assets.normalize.text import fold_tag, unique
from crawl_assets.sources.telegram.normalize import PERSONS, _CHANNEL_TYPES, _kind, _seconds
from crawl_assets.sources.telegram.normalize_export_topics import TOPIC_CREATED, ExportForum
from crawl_assets.sources.telegram.normalize_peers import export_chat_id, message_key, shifted_peer
from crawl_assets.sources.telegram.normalize_topics import GENERAL_TOPIC, topic_metadata

_MESSAGE_PREFIXES = {"messages.item", "chats.list.item.messages.item", "left_chats.list.item.messages.item"}
_CHAT_PREFIXES = ("", "chats.list.item.", "left_chats.list.item.")
_CHAT_STARTS = {p.rstrip(".") for p in _CHAT_PREFIXES}
_CHAT_FIELDS = {p + f: f for p in _CHAT_PREFIXES for f in ("id", "type", "name")}
_STRUCTURE = {"map_key", "start_map", "end_map", "start_array", "end_array"}
_EXPORT_KEYS = re.compile(rb'^\s*\{\s*"(?:about|personal_information|chats|left_chats|name|type|id|messages)"\s*:')
_EXPORT_BODY = re.compile(rb'"messages"\s*:\s*\[|"chats"\s*:\s*\{|"type"\s*:\s*"(?:personal_chat|private_group|'
                          rb'private_supergroup|public_supergroup|public_channel|private_channel|saved_messages|bot_chat)"')


def sniff_export(head: bytes, line: dict[str, Any] | None) -> bool:
    """A ``result.json``: one chat's document (``messages``) or a whole account's (``chats``)."""
    if line is not None:
        return isinstance(line.get("messages"), list) or "chats" in line
    text = head.lstrip()
    return bool(_EXPORT_KEYS.match(text) and _EXPORT_BODY.search(text))


def normalize_export(
    stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True
) -> Iterator[Item]:
    """Records from a Telegram Desktop export (one chat, or a full export's ``chats.list``), streamed:
    only one message is held in memory. ``line`` in rejections is the message's ordinal in the file."""
    batch = Batch("telegram-export", name, context, validate=validate)
    ordinal = 0
    chats: list[dict[str, Any]] = []
    reader = DocumentReader(stream)
    forum = ExportForum()
    try:
        for chat, ordinal, message in _iter_export(reader, chats):
            reader.flag(batch, ordinal, message)
            forum.enter(chat)
            yield batch.guard(ordinal, message, _export_message, batch, ordinal, chat, message, forum)
    except (ijson.JSONError, UnicodeDecodeError) as exc:
        yield batch.reject(ordinal + 1, "invalid JSON, rest of file skipped: " + parse_error_text(exc))
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
    """``"user123"``/``"channel123"``/``"chat123"`` of an export as (type, bare id); exports before 2021 wrote
    a number: a user id, or (September 2020 to April 2021) a shifted peer id."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return shifted_peer(value) or ("user", str(value))
    return PERSONS.split(value) if isinstance(value, str) else None


def _export_message(batch: Batch, ordinal: int, chat: dict[str, Any], m: Any, forum: ExportForum) -> Item:
    if not isinstance(m, dict):
        raise InputError("message is not a JSON object")
    if m.get("type") == "service" and m.get("action") == TOPIC_CREATED and "id" in chat:
        return _export_topic(batch, ordinal, chat, m, forum)
    if m.get("type") == "service":  # a topic's edit too: the export does not say which topic it edits
        return batch.reject(ordinal, SERVICE_MESSAGE, m, error=False)
    if m.get("type") == "unsupported":  # a message the exporting app could not show (only id and type)
        return batch.reject(ordinal, "message the exporting app could not show ('unsupported')", m, error=False)
    if m.get("type") != "message":
        raise InputError(f"field 'type': expected 'message' or 'service', got {m.get('type')!r}"[:200])
    if "id" not in chat:
        raise InputError("chat field 'id' missing (must come before 'messages')")
    chat_id = export_chat_id(chat.get("id"), m)
    message_id = as_id(opt_int(m.get("id")), "id")
    key = message_key(chat_id, message_id)
    created, edited, provenance = _export_times(batch, m, batch.provenance(ordinal))

    text, parts = _export_text(m)
    hashtags, mentions, urls, mention_ids = _export_entities(parts)
    sender = _from_peer_string(m.get("from_id"))
    chat_type = opt_str(chat.get("type"))
    reply_id = opt_int(m.get("reply_to_message_id"))
    reply_to = conversation = None
    reply_peer = _from_peer_string(m.get("reply_to_peer_id"))
    if reply_id is not None:
        reply_to = message_key(reply_peer[1] if reply_peer else chat_id, reply_id)
    topic, top_level = forum.place(int(message_id), reply_id, reply_peer is None or reply_peer[1] == chat_id)
    if topic is not None and topic != GENERAL_TOPIC:  # the topic is the thread; a top-level message replies to none
        conversation = message_key(chat_id, topic)
        reply_to = None if top_level else reply_to
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
    if topic is not None:
        metadata.update(topic_metadata(topic, chat_id, batch.context.topics, forum.title(topic)))
    if LOCAL_TIME in provenance["flags"]:
        metadata["export_timezone"] = batch.context.timezone
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
            "conversation_id": conversation or reply_to or key,
            "hashtags": hashtags,
            "mentions": mentions,
            "urls": urls,
            "media": _export_media(m),
            "metrics": {"views": opt_int(m.get("views")), "forwards": opt_int(m.get("forwards")),
                        "reactions": _export_reactions(m.get("reactions"))},
            "metadata": metadata,
            "provenance": provenance,
        }
    )


def _export_topic(batch: Batch, ordinal: int, chat: dict[str, Any], m: dict[str, Any], forum: ExportForum) -> Item:
    """A topic's creation (kind ``topic``, its title the text), as the Telethon path makes it; the topic's
    id is the message's own."""
    chat_id = export_chat_id(chat.get("id"), m)
    message_id = as_id(opt_int(m.get("id")), "id")
    created, _, provenance = _export_times(batch, m, batch.provenance(ordinal))
    title = opt_str(m.get("title"))
    forum.created(int(message_id), title)
    actor = _from_peer_string(m.get("actor_id"))
    metadata: dict[str, Any] = {"chat_type": opt_str(chat.get("type")), "chat_name": opt_str(chat.get("name")),
                                **topic_metadata(int(message_id), chat_id, batch.context.topics, title)}
    if LOCAL_TIME in provenance["flags"]:
        metadata["export_timezone"] = batch.context.timezone
    return batch.finish(
        {
            "key": message_key(chat_id, message_id),
            "platform": "telegram",
            "kind": "topic",
            "native_id": message_id,
            "author_id": actor[1] if actor else chat_id,
            "author_handle": None,
            "created_at": created,
            "text": title or "",
            "conversation_id": message_key(chat_id, message_id),
            "metadata": {k: v for k, v in metadata.items() if v is not None},
            "provenance": provenance,
        }
    )


def _export_times(batch: Batch, m: dict[str, Any], provenance: dict[str, Any]) -> tuple[datetime, datetime | None,
                                                                                    dict[str, Any]]:
    """(created, edited, provenance) of a message: its unix times, else its local ones converted (and flagged)."""
    if m.get("date_unixtime") is not None:
        created = from_unix(m.get("date_unixtime"), "date_unixtime")
    else:  # an export made before Telegram Desktop wrote date_unixtime: 'date' is the exporter's local time
        created = _local_time(batch.context, m.get("date"), "date")
        provenance = with_flag(provenance, LOCAL_TIME)
    if m.get("edited_unixtime") is not None:
        edited = from_unix(m["edited_unixtime"], "edited_unixtime")
    elif m.get("edited") is not None:
        edited = _local_time(batch.context, m["edited"], "edited")
        provenance = with_flag(provenance, LOCAL_TIME)
    else:
        edited = None
    if edited is not None and edited < created:  # the epoch: what exports before June 2020 wrote for "not edited"
        edited = None
    return created, edited, provenance


LOCAL_TIME = "local_time_converted"
# How a rejection for a missing time zone begins (``sources add`` reports it against options.timezone).
NEEDS_TIMEZONE = "field 'date_unixtime' missing"


def _local_time(context: NormalizeContext, value: Any, field: str) -> datetime:
    """An export's local ``date``/``edited`` (``2019-05-01T12:34:56``) as UTC, with the source's timezone."""
    if context.timezone is None:
        raise InputError(
            f"{NEEDS_TIMEZONE}: this export was made before Telegram Desktop wrote it, and its "
            f"'{field}' is the exporting computer's local time; give the time zone that computer was set to (an "
            "IANA name): in the source's registry options (options: {timezone: Asia/Tehran}), or crawl-assets "
            "normalize --timezone Asia/Tehran")
    try:
        local = datetime.fromisoformat(str(value))
    except ValueError:
        raise InputError(f"field '{field}': not a date: {value!r}"[:200]) from None
    if local.tzinfo is None:
        local = local.replace(tzinfo=ZoneInfo(context.timezone))
    return local.astimezone(timezone.utc)


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
