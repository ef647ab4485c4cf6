"""Forum topics in Telethon lines (``normalize.py`` reads the rest of a message).

A message's ``forum_topic`` reply header names its topic (a message *in* a topic is not a reply; a reply inside
one has the topic as ``reply_to_top_id``); ``metadata.topic_id``, ``metadata.topic`` (the topic's key: the key of
the message that created it) and ``metadata.topic_title`` (the batch's ``context.topics``, as the collector knew
them) say which. A message with no such header is in General when the batch's topics name the chat's General
topic. Topic creations and edits are records of their own (kinds ``topic`` and ``topic_edit``, the title as text).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from crawl_assets.normalize.build import Batch, InputError, Item, as_dict, as_id, opt_int, opt_str
from crawl_assets.sources.telegram.normalize_peers import message_key

GENERAL_TOPIC = 1
TOPIC_ACTIONS = {"MessageActionTopicCreate": "topic", "MessageActionTopicEdit": "topic_edit"}


def is_topic_action(m: dict[str, Any]) -> bool:
    """A service message that creates or edits a forum topic."""
    return as_dict(m.get("action")).get("_") in TOPIC_ACTIONS


def topic_of(reply: dict[str, Any], chat_id: str, topics: Mapping[str, str] | None) -> int | None:
    """The topic of a forum message: its ``forum_topic`` header's top id or replied id; General when the
    batch's topics name the chat's General topic; None outside forums."""
    if reply.get("_") == "MessageReplyHeader" and reply.get("forum_topic"):
        top = opt_int(reply.get("reply_to_top_id"))
        topic = top if top is not None else opt_int(reply.get("reply_to_msg_id"))
        if topic is not None:
            return topic
    if isinstance(topics, Mapping) and f"{chat_id}:{GENERAL_TOPIC}" in topics:
        return GENERAL_TOPIC
    return None


def topic_thread(reply: dict[str, Any], chat_id: str, topic: int) -> tuple[str, str | None]:
    """(conversation, reply_to) of a message in a topic other than General: the topic is its thread; it replies
    to a message only when its header has the topic as top id besides the replied one."""
    if opt_int(reply.get("reply_to_top_id")) is None:
        return message_key(chat_id, topic), None
    replied = as_id(reply.get("reply_to_msg_id"), "reply_to.reply_to_msg_id")
    return message_key(chat_id, topic), message_key(chat_id, replied)


def topic_metadata(topic: int, chat_id: str, topics: Mapping[str, str] | None, title: str | None = None) -> dict[str, Any]:
    """``topic_id``, ``topic`` (its key) and ``topic_title`` (``title``, else the batch's, when known)."""
    known = topics.get(f"{chat_id}:{topic}") if isinstance(topics, Mapping) else None
    fields: dict[str, Any] = {"topic_id": topic, "topic": message_key(chat_id, topic)}
    title = title or (known if isinstance(known, str) else None)
    if title:
        fields["topic_title"] = title
    return fields


def topic_record(batch: Batch, line: int, m: dict[str, Any], peer: tuple[str, str], author_id: str,
                 created_at: datetime) -> Item:
    """A topic's creation (kind ``topic``: its key is the topic's) or its rename, closing or hiding
    (``topic_edit``): the title is the text."""
    message_id = as_id(m.get("id"), "id")
    chat_type, chat_id = peer
    action = as_dict(m.get("action"))
    kind = TOPIC_ACTIONS[action["_"]]
    title = opt_str(action.get("title"))
    topic = int(message_id) if kind == "topic" else topic_of(as_dict(m.get("reply_to")), chat_id, None)
    if topic is None:
        raise InputError("field 'reply_to': a topic edit names no topic (forum_topic header missing)")
    metadata: dict[str, Any] = {"chat_type": chat_type, **topic_metadata(topic, chat_id, batch.context.topics, title)}
    for flag in ("closed", "hidden"):
        if isinstance(action.get(flag), bool):
            metadata[f"topic_{flag}"] = action[flag]
    return batch.finish(
        {
            "key": message_key(chat_id, message_id),
            "platform": "telegram",
            "kind": kind,
            "native_id": message_id,
            "author_id": author_id,
            "author_handle": None,
            "created_at": created_at,
            "text": title or "",
            "conversation_id": message_key(chat_id, topic),
            "metadata": metadata,
            "provenance": batch.provenance(line),
        }
    )
