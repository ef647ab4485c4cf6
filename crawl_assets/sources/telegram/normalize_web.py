"""Telegram normalizer ``telegram-web``: a public channel's web preview pages (``t.me/s/<channel>``), one page per
line in a crawl envelope, as the ``web_channel`` kind stores them::

    {"crawl": {"endpoint": "s", "web_channel": "name", "retrieved_at": "...", "vanished": [41]}, "response": "<html>…"}

Records get the keys of the API's messages (``telegram:{chat_id}:{id}``: the chat id is the page's
``data-view``), the same text, hashtags, mentions and URLs, and what else the page shows (see
docs/sources/telegram.md for what it does not: edit times, exact counters, a forward's origin chat id,
media ids and sizes). ``vanished`` ids (gone from a window the collector read before) become tombstones.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from crawl_assets.normalize.build import (
    SERVICE_MESSAGE, Batch, InputError, Item, crawl_field, media_doc, normalize_envelopes, parse_instant,
)
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.text import fold_tag, unique
from crawl_assets.sources.telegram.normalize_peers import message_key
from crawl_assets.sources.telegram.web_page import WebMessage, parse_page

FORMAT = "telegram-web"
EXPECTED = "expected a t.me/s page in a crawl envelope {\"crawl\": {\"web_channel\": ...}, \"response\": \"<html>\"}"


def normalize_web(stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True) -> Iterator[Item]:
    """Records of one raw batch of web preview pages."""
    batch = Batch(FORMAT, name, context, validate=validate)

    def read(line: int, raw: bytes, crawl: dict[str, Any], response: Any, provenance: dict[str, Any]) -> Iterator[Item]:
        channel = crawl_field(crawl, "web_channel")
        if not isinstance(response, str):
            raise InputError("field 'response': expected the page's HTML as a string")
        page = parse_page(response)
        if not page.is_preview:
            raise InputError(f"field 'response': not a channel preview page of {channel!r}")
        chat_id = next((m.chat_id for m in page.messages if m.chat_id), None) or _opt_id(crawl.get("chat_id"))
        for message in page.messages:
            yield batch.guard(line, f"{message.channel}/{message.id}", _record, batch, message, chat_id, provenance)
        vanished = crawl.get("vanished") or []
        if not isinstance(vanished, list):
            raise InputError("field 'crawl.vanished': expected a list of message ids")
        if vanished and chat_id is None:
            raise InputError("field 'crawl.vanished': no chat id on the page to key the deletions")
        for message_id in vanished:
            yield batch.guard(line, message_id, _tombstone, batch, chat_id, message_id, crawl, provenance)

    return normalize_envelopes(stream, batch, read, expected=EXPECTED)


def _opt_id(value: Any) -> str | None:
    return value if isinstance(value, str) and value.isdigit() else None


def _record(batch: Batch, m: WebMessage, page_chat: str | None, provenance: dict[str, Any]) -> Item:
    if m.service:
        return batch.reject(provenance["raw_line"], SERVICE_MESSAGE, f"{m.channel}/{m.id}", error=False)
    chat_id = m.chat_id or page_chat
    if chat_id is None:
        raise InputError(f"message {m.channel}/{m.id}: no channel id (data-view) on the page")
    key = message_key(chat_id, m.id)
    reply_to = None
    if m.reply is not None and m.reply.post is not None:
        if m.reply.kind == "public" and m.reply.name.lower() == m.channel.lower():
            reply_to = message_key(chat_id, m.reply.post)
        elif m.reply.kind == "private":
            reply_to = message_key(m.reply.chat_id, m.reply.post)
    metadata: dict[str, Any] = {"chat_type": "channel", "chat_username": m.channel, "collected_via": "web_preview"}
    if m.signature:
        metadata["post_author"] = m.signature
    if m.edited:
        metadata["edited"] = True
    if m.views_rounded:
        metadata["views_rounded"] = True
    repost_of = None
    if m.forwarded is not None:
        metadata["forwarded_from"] = {"from_type": "channel", **m.forwarded} if "from_username" in m.forwarded \
            else dict(m.forwarded)
        origin, post = m.forwarded.get("from_username"), m.forwarded.get("channel_post")
        if origin and post is not None and origin.lower() == m.channel.lower():
            repost_of = message_key(chat_id, post)  # a forward of the channel's own post: its id is known
    media = [media_doc(**item) for item in m.media]
    return batch.finish({
        "key": key,
        "platform": "telegram",
        "kind": "repost" if m.forwarded is not None else "reply" if reply_to else "post",
        "native_id": str(m.id),
        "author_id": chat_id,
        "author_handle": None,
        "created_at": parse_instant(m.date, "time.datetime"),
        "edited_at": None,
        "text": m.text,
        "reply_to": reply_to,
        "repost_of": repost_of,
        "conversation_id": reply_to or key,
        "hashtags": unique([fold_tag(t) for t in m.hashtags]),
        "mentions": unique([fold_tag(t) for t in m.mentions]),
        "urls": m.urls,
        "media": media,
        "metrics": {"views": m.views, "forwards": None, "replies": None, "reactions": m.reactions},
        "metadata": metadata,
        "provenance": provenance,
    })


def _tombstone(batch: Batch, chat_id: str, message_id: Any, crawl: dict[str, Any], provenance: dict[str, Any]) -> Item:
    if not isinstance(message_id, int) or isinstance(message_id, bool) or message_id <= 0:
        raise InputError(f"field 'crawl.vanished': not a message id: {message_id!r}"[:200])
    observed = parse_instant(crawl.get("retrieved_at"), "crawl.retrieved_at")
    key = message_key(chat_id, message_id)
    return batch.finish({
        "key": key, "platform": "telegram", "kind": "message", "native_id": str(message_id), "author_id": None,
        "created_at": observed, "deleted": True, "deleted_at": observed, "text": "", "conversation_id": key,
        "metadata": {"chat_type": "channel", "tombstone": True}, "provenance": provenance,
    })
