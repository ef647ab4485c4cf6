"""The chats Telegram records name, for discovery (``DiscoverySpec`` of the Telegram spec): forwards (the API's
origin channel id, the web page's origin username), ``t.me`` links (public usernames, ``t.me/c/<id>`` ids) and
@mentions. A candidate is ``@username`` (lower case) or ``id:<chat id>``; invites, bots (``…bot``) and people
forwarded from name no candidate. A mention may name a person: a person decides (``discover approve``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from crawl_assets.sources.telegram import tme_links


def _username(name: str) -> tuple[str, str] | None:
    if not tme_links.is_username(name) or name.lower().endswith("bot"):
        return None
    return f"@{name.lower()}", f"@{name}"


def references(row: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(candidate, label, way) of each chat one record names; ``self``: its own chat."""
    key = row.get("key") or ""
    parts = key.split(":")
    if len(parts) == 3 and parts[1].isdigit():
        yield f"id:{parts[1]}", f"id:{parts[1]}", "self"
    meta_text = row.get("metadata") or ""
    meta: dict[str, Any] = {}
    if "chat_username" in meta_text or "forwarded_from" in meta_text:  # most records name none: no JSON read
        loaded = orjson.loads(meta_text)
        meta = loaded if isinstance(loaded, dict) else {}
    own = meta.get("chat_username")
    if isinstance(own, str) and (found := _username(own)) is not None:
        yield *found, "self"
    forwarded = meta.get("forwarded_from")
    origin = meta.get("forwarded_from_id")  # a Desktop export: the origin's name and its "channel<id>"
    if isinstance(origin, str) and origin.startswith("channel") and origin[7:].isdigit():
        yield f"id:{origin[7:]}", forwarded if isinstance(forwarded, str) and forwarded else f"id:{origin[7:]}", "forward"
    if isinstance(forwarded, dict) and forwarded.get("from_type") in ("channel", "chat", None):
        name, chat_id = forwarded.get("from_username"), forwarded.get("from_id")
        if isinstance(name, str) and (found := _username(name)) is not None:
            yield *found, "forward"
        elif isinstance(chat_id, str) and chat_id.isdigit() and forwarded.get("from_type") == "channel":
            label = forwarded.get("from_name") if isinstance(forwarded.get("from_name"), str) else None
            yield f"id:{chat_id}", label or f"id:{chat_id}", "forward"
    for url in row.get("urls") or ():
        link = tme_links.parse(url) if "t.me" in url or "telegram." in url else None
        if link is None:
            continue
        if link.kind == "public" and (found := _username(link.name)) is not None:
            yield *found, "link"
        elif link.kind == "private":
            yield f"id:{link.chat_id}", f"id:{link.chat_id}", "link"
    for handle in row.get("mentions") or ():
        found = _username(handle)
        if found is not None:
            yield *found, "mention"


def candidate_of(identifier: str) -> str | None:
    """The candidate a registry identifier stands for (``@name``, ``t.me`` links, numeric ids)."""
    ident = identifier.strip()
    if ident.lstrip("-").isdigit():
        digits = ident.lstrip("-")
        return f"id:{digits[3:] if ident.startswith('-100') and len(digits) > 12 else digits}"
    name = tme_links.channel_name(ident)
    return f"@{name.lower()}" if name else None


def identifier_of(candidate: str) -> str | None:
    """What an approval registers for a candidate: its username (an id-only candidate needs one given)."""
    return candidate if candidate.startswith("@") else None
