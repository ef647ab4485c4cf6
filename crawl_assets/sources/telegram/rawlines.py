"""The raw forms the collector stores: Telethon messages as JSON lines, deletion markers, chat metadata.

A message line is exactly the JSON of ``Message.to_json()`` (the same ``to_dict()`` and the same
``default`` for bytes and datetimes), serialized with orjson because it is several times faster on
large histories; only the escaping of non-ASCII characters differs, not the value.

A deletion is a line of its own (format ``telegram``), shaped like a message's identity so the
normalizer can reuse its peer handling::

    {"_": "crawl_assets.deleted", "peer_id": {"_": "PeerChannel", "channel_id": 123}, "id": 42,
     "observed_at": "2026-11-30T03:30:00+00:00", "chat_type": "supergroup"}

``chat_type`` (a PeerChannel is a broadcast channel or a supergroup) is what the chat's messages
say in ``metadata.chat_type``; lines written before it lack it.
"""

from __future__ import annotations

import zlib
from datetime import datetime
from typing import Any

import orjson
from telethon.tl import TLObject, types
from telethon.tl.tlobject import _json_default

from crawl_assets.normalize.build import DELETED
from crawl_assets.sources.telegram.state import Peer


def message_line(message: TLObject) -> bytes:
    """One raw line: the message as ``Message.to_json()`` would write it."""
    data = message.to_dict()
    try:
        return orjson.dumps(data, default=_json_default)
    except (TypeError, orjson.JSONEncodeError):  # e.g. an int beyond 64 bits: the slow path is exact
        return message.to_json().encode()


def deletion_line(peer: TLObject, message_id: int, observed_at: datetime, chat_type: str | None = None,
                  reason: str | None = None) -> bytes:
    """A deletion observation: the message ``message_id`` of ``peer`` was missing from a complete read; with a
    ``reason``, an id lookup's answer (``not_found``: Telegram answered ``MessageEmpty``; else why it is out of reach)."""
    line = {"_": DELETED, "peer_id": peer.to_dict(), "id": message_id, "observed_at": observed_at.isoformat()}
    if chat_type:
        line["chat_type"] = chat_type
    return orjson.dumps(line if reason is None else {**line, "reason": reason})


def chat_type(peer: Peer | None, messages: list[Any]) -> str | None:
    """The synced chat's ``metadata.chat_type``: ``chat`` (a basic group), ``supergroup`` or ``channel``. A channel
    cached before its kind was noted is told by ``messages`` (a broadcast channel's are posts); None if unknown."""
    if peer is None or peer.kind == "chat":
        return None if peer is None else "chat"
    if peer.megagroup is None:
        said = [bool(m.post) for m in messages if isinstance(m, types.Message)]  # service messages say less
        return None if not said else "channel" if any(said) else "supergroup"
    return "supergroup" if peer.megagroup else "channel"


def fingerprint(message: TLObject) -> int:
    """What a re-read must notice: an edit, or changed views/forwards/replies/reactions (crc32, compact)."""
    replies = getattr(message, "replies", None)
    reactions = getattr(message, "reactions", None)
    counts = []
    for result in getattr(reactions, "results", None) or []:
        reaction = getattr(result, "reaction", None)
        label = reaction.stringify() if isinstance(reaction, TLObject) else repr(reaction)  # TL reprs hold addresses
        counts.append((label, getattr(result, "count", 0)))
    edit = getattr(message, "edit_date", None)
    key = (
        edit.timestamp() if edit else 0,
        getattr(message, "views", None),
        getattr(message, "forwards", None),
        getattr(replies, "replies", None),
        tuple(counts),
        getattr(message, "pinned", None),
    )
    return zlib.crc32(repr(key).encode())


def replies_max_id(message: TLObject) -> int:
    """The newest comment id of a channel post's discussion thread (0 when none)."""
    replies = getattr(message, "replies", None)
    return int(getattr(replies, "max_id", None) or 0) if replies is not None and getattr(replies, "comments", False) else 0


def chat_summary(full: Any) -> dict[str, Any]:
    """The chat facts the raw manifest carries (``messages.ChatFull`` of a channel or group)."""
    chat = full.full_chat
    entity = next((c for c in full.chats if getattr(c, "id", None) == chat.id), None)
    linked = getattr(chat, "linked_chat_id", None)
    linked_entity = next((c for c in full.chats if linked and getattr(c, "id", None) == linked), None)
    return {
        "id": chat.id,
        "title": getattr(entity, "title", None),
        "username": getattr(entity, "username", None),
        "about": getattr(chat, "about", None),
        "participants_count": getattr(chat, "participants_count", None),
        "broadcast": bool(getattr(entity, "broadcast", False)),
        "megagroup": bool(getattr(entity, "megagroup", False)),
        "forum": bool(getattr(entity, "forum", False)),
        "linked_chat_id": linked,
        "linked_chat_title": getattr(linked_entity, "title", None),
        "linked_chat_username": getattr(linked_entity, "username", None),
        "pinned_msg_id": getattr(chat, "pinned_msg_id", None),
    }


def chat_raw(full: Any) -> Any:
    """The whole ``messages.ChatFull`` as JSON (as received), for the manifest's ``extra``."""
    return orjson.loads(orjson.dumps(full.to_dict(), default=_json_default))
