"""Intercom normalizer (format ``intercom``): one conversation per line → one record per message.

The opening message (``source``; ``conversation_message`` in the API before 2.0) and every part with a body
become records keyed ``intercom:{workspace}:{conversation_id}:{part_id}``; parts reply to the opening
message. Admins, users, leads/contacts and bots are authors (``author_id`` = ``{type}:{id}``; emails are
never copied). Parts without a body (assignments, open/close, snoozes) are reported as non-posts, and a
conversation without an opening message as a rejection: nothing vanishes. A landed webhook notification
(``type: notification_event``) is read through its ``data.item`` conversation. A redacted part is a
deletion; ``updated_at`` moves with tags, state and redaction, so it never makes a part an edit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from crawl_assets.normalize.build import (
    Batch, InputError, Item, as_dict, as_id, as_list, crawl_field, from_unix, media_doc, normalize_envelopes, opt_int,
    opt_str,
)
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.persons import PersonIds
from crawl_assets.normalize.text import html_text, unique

PERSONS = PersonIds(  # author_id = "{author.type}:{author.id}"; contacts and teammates are people (before 2.0:
    # the conversation's "user", "customers" and "assignee")
    owner_keys=("author",), containers=("contacts", "teammates", "admins", "customers"),
    reference_keys=("admin_assignee_id", "user", "assignee"), typed=True,
)
OPENING_FIELDS = ("source", "conversation_message")  # the opening message: API 2.x, then 1.x

FORMAT = "intercom"


def normalize_intercom(stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True) -> Iterator[Item]:
    """Records of the conversations in one raw batch (or ``crawl-assets normalize --format intercom`` file)."""
    batch = Batch(FORMAT, name, context, validate=validate)

    def read(line: int, raw: bytes, crawl: dict[str, Any], response: Any, provenance: dict[str, Any]) -> Iterator[Item]:
        yield from _records(batch, line, raw, crawl_field(crawl, "workspace"), _conversation(response), provenance)

    return normalize_envelopes(stream, batch, read)


def _conversation(response: Any) -> dict[str, Any]:
    obj = as_dict(response)
    if obj.get("type") == "notification_event":
        obj = as_dict(as_dict(obj.get("data")).get("item"))
    if obj.get("type") != "conversation":
        raise InputError("field 'response.type': not a conversation (or a notification about one)")
    return obj


def _records(batch: Batch, line: int, raw: bytes, workspace: str, conv: dict[str, Any],
             provenance: dict[str, Any]) -> Iterator[Item]:
    conv_id = as_id(conv.get("id"), "response.id")
    root = f"intercom:{workspace}:{conv_id}"
    shared = {
        "conversation_state": opt_str(conv.get("state")),
        "tags": [t["name"] for t in as_list(as_dict(conv.get("tags")).get("tags")) if isinstance(as_dict(t).get("name"), str)],
        "priority": opt_str(conv.get("priority")),
    }
    field = next((f for f in OPENING_FIELDS if as_dict(conv.get(f))), None)
    opening = None
    if field is None:
        yield batch.reject(line, f"conversation {conv_id}: no opening message (neither {' nor '.join(OPENING_FIELDS)})",
                           raw)
    else:
        source = conv[field]
        try:
            opening = f"{root}:{as_id(source.get('id'), f'response.{field}.id')}"
        except InputError as exc:
            yield batch.reject(line, str(exc), source)
        else:
            yield batch.guard(line, source, _message, batch, opening, conv_id, root, source, "message",
                              conv.get("created_at"), None, shared, provenance)
    parts = as_list(as_dict(conv.get("conversation_parts")).get("conversation_parts"))
    for index, part in enumerate(parts):
        part = as_dict(part)
        part_type = opt_str(part.get("part_type")) or "unknown"
        if not opt_str(part.get("body")) and not as_list(part.get("attachments")):
            yield batch.reject(line, f"conversation {conv_id} part {part.get('id')}: {part_type} without a body",
                               part, error=False)
            continue
        try:
            key = f"{root}:{as_id(part.get('id'), f'conversation_parts[{index}].id')}"
        except InputError as exc:
            yield batch.reject(line, str(exc), raw)
            continue
        kind = {"comment": "comment", "note": "note"}.get(part_type, part_type)
        yield batch.guard(line, part, _message, batch, key, conv_id, root, part, kind, part.get("created_at"),
                          opening, shared, provenance)


def _message(batch: Batch, key: str, conv_id: str, root: str, part: dict[str, Any], kind: str, created: Any,
             reply_to: str | None, shared: dict[str, Any], provenance: dict[str, Any]) -> Item:
    author = as_dict(part.get("author"))
    author_type = opt_str(author.get("type"))
    author_id = opt_str(author.get("id")) or (str(author["id"]) if isinstance(author.get("id"), int) else None)
    body = html_text(opt_str(part.get("body")) or "")
    created_at = from_unix(created, f"{kind}.created_at")
    redacted = part.get("redacted") is True
    updated = opt_int(part.get("updated_at")) if redacted else None  # the redaction's time, at best
    deleted_at = from_unix(updated, f"{kind}.updated_at") if updated and updated > created_at.timestamp() else None
    metadata = {k: v for k, v in shared.items() if v}
    metadata.update({k: v for k, v in {
        "author_type": author_type,
        "part_type": opt_str(part.get("part_type")),
        "delivered_as": opt_str(part.get("delivered_as")),
        "subject": html_text(opt_str(part.get("subject")) or "").text or None,
        "intercom_conversation_id": conv_id,
    }.items() if v})
    return batch.finish({
        "key": key,
        "platform": "intercom",
        "kind": kind,
        "native_id": key.rsplit(":", 1)[1],
        "author_id": PERSONS.author_id(author_id, author_type),
        "author_handle": opt_str(author.get("name")),
        "created_at": created_at,
        "deleted": redacted,
        "deleted_at": deleted_at,
        "text": body.text,
        "reply_to": reply_to,
        "conversation_id": root,
        "urls": unique(body.urls),
        "media": [_attachment(a) for a in as_list(part.get("attachments"))],
        "metadata": metadata,
        "provenance": provenance,
    })


def _attachment(value: Any) -> dict[str, Any]:
    a = as_dict(value)
    return media_doc(type="document", id=opt_str(a.get("name")), mime=opt_str(a.get("content_type")),
                     size=opt_int(a.get("filesize")), width=opt_int(a.get("width")), height=opt_int(a.get("height")),
                     url=opt_str(a.get("url")))
