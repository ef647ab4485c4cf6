"""Hacker News normalizer (format ``hackernews``): Algolia ``search_by_date`` pages → one record per hit.

Keys are ``hackernews:{item_id}`` (the HN item id, same as the Firebase API's). Stories and polls are
``post`` (text: title, then the story text), comments are ``comment`` replying to ``parent_id`` in the thread
``story_id``. A poll option (tag ``pollopt``) is a ``poll_option``: not a story, it links to its poll
(``metadata.poll``, the poll's key) and belongs to the poll's conversation. Points → ``metrics.likes``
(a poll option's votes), ``num_comments`` → ``metrics.replies``.

Items of the official Firebase API (``/v0/item/{id}.json``: ``by``, ``time``, ``type``, ``parent``, ``kids``,
``score``, ``descendants``) are read too, one per line, bare or as an envelope's ``response``. They do not
name a comment's story, so a comment's ``conversation_id`` is null; ``deleted`` items are deletions and
``dead`` ones keep ``metadata.dead``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from crawl_assets.normalize.build import (
    Batch, InputError, Item, as_id, as_list, from_unix, normalize_envelopes, opt_int, opt_str, parse_instant,
)  # fmt: skip
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.persons import PersonIds
from crawl_assets.normalize.text import html_text, unique

PERSONS = PersonIds(owner_keys=("author",))  # Algolia hits name their author by username, the author_id

FORMAT = "hackernews"


def normalize_hackernews(stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True) -> Iterator[Item]:
    """Records of one raw batch of search pages (one envelope per line)."""
    batch = Batch(FORMAT, name, context, validate=validate)

    def read(line: int, raw: bytes, crawl: dict[str, Any], response: Any, provenance: dict[str, Any]) -> Iterator[Item]:
        if is_firebase_item(response):
            yield batch.guard(line, response, _item, batch, response, provenance)
            return
        if not isinstance(response, dict) or not isinstance(response.get("hits"), list):
            raise InputError(f"field 'response.hits': missing or not a list ({SUPPORTED})")
        for index, hit in enumerate(response["hits"]):
            yield batch.guard(line, hit, _hit, batch, hit, index, provenance)

    return normalize_envelopes(stream, batch, read, bare=is_firebase_item, expected=f"expected {SUPPORTED}")


SUPPORTED = ("an Algolia search page in a crawl envelope, or a Firebase API item (/v0/item/{id}.json), bare or "
             "as an envelope's response")
ITEM_TYPES = {"story": "post", "job": "post", "poll": "post", "comment": "comment", "pollopt": "poll_option"}


def is_firebase_item(value: Any) -> bool:
    """An item of the official API: an integer ``id`` and an HN ``type`` (a deleted item keeps both)."""
    return (isinstance(value, dict) and isinstance(value.get("id"), int) and not isinstance(value["id"], bool)
            and isinstance(value.get("type"), str) and value["type"] in ITEM_TYPES)


def _item(batch: Batch, item: dict[str, Any], provenance: dict[str, Any]) -> Item:
    item_id = as_id(item["id"], "id")
    item_type = item["type"]
    kind = ITEM_TYPES[item_type]
    title = opt_str(item.get("title"))
    body = html_text(opt_str(item.get("text")) or "")
    parent, poll = opt_int(item.get("parent")), opt_int(item.get("poll"))
    url = opt_str(item.get("url"))
    text = "\n\n".join(p for p in (title, body.text) if p) if kind == "post" else body.text
    deleted = item.get("deleted") is True
    metadata = {k: v for k, v in {
        "title": title, "url": url, "item_type": item_type, "poll": f"hackernews:{poll}" if poll else None,
        "dead": item.get("dead") is True or None, "hn_url": f"https://news.ycombinator.com/item?id={item_id}",
    }.items() if v}
    return batch.finish({
        "key": f"hackernews:{item_id}",
        "platform": "hackernews",
        "kind": kind,
        "native_id": item_id,
        "author_id": opt_str(item.get("by")),
        "author_handle": opt_str(item.get("by")),
        "created_at": from_unix(item.get("time"), "time"),
        "deleted": deleted,
        "text": text,
        "reply_to": f"hackernews:{parent}" if kind == "comment" and parent else None,
        "conversation_id": f"hackernews:{item_id}" if kind == "post" else f"hackernews:{poll}" if poll else None,
        "urls": unique(([url] if url else []) + body.urls),
        "metrics": {"likes": opt_int(item.get("score")), "replies": opt_int(item.get("descendants"))},
        "metadata": metadata,
        "provenance": provenance,
    })


def _hit(batch: Batch, hit: Any, index: int, provenance: dict[str, Any]) -> Item:
    if not isinstance(hit, dict):
        raise InputError(f"hits[{index}]: not a JSON object")
    item_id = as_id(hit.get("objectID"), f"hits[{index}].objectID")
    tags = [t for t in as_list(hit.get("_tags")) if isinstance(t, str)]
    is_option = "pollopt" in tags
    is_comment = not is_option and ("comment" in tags or hit.get("comment_text") is not None)
    title = opt_str(hit.get("title"))
    story = opt_int(hit.get("story_id"))
    parent = opt_int(hit.get("parent_id"))
    if is_option:  # the option's text, wherever the search index put it
        body = html_text(next((t for f in ("text", "comment_text", "story_text") if (t := opt_str(hit.get(f)))), ""))
        text = body.text or title or ""
        poll = parent or story
    else:
        body = html_text(opt_str(hit.get("comment_text") if is_comment else hit.get("story_text")) or "")
        text = body.text if is_comment else "\n\n".join(p for p in (title, body.text) if p)
        poll = None
    url = opt_str(hit.get("url"))
    item_type = "pollopt" if is_option else "comment" if is_comment else "poll" if "poll" in tags else "story"
    metadata = {k: v for k, v in {
        "title": title if not is_option else None, "url": url, "story_title": opt_str(hit.get("story_title")),
        "story_url": opt_str(hit.get("story_url")), "item_type": item_type,
        "poll": f"hackernews:{poll}" if poll else None,
        "hn_url": f"https://news.ycombinator.com/item?id={item_id}",
    }.items() if v}
    thread = poll if is_option else story
    return batch.finish({
        "key": f"hackernews:{item_id}",
        "platform": "hackernews",
        "kind": "poll_option" if is_option else "comment" if is_comment else "post",
        "native_id": item_id,
        "author_id": opt_str(hit.get("author")),
        "author_handle": opt_str(hit.get("author")),
        "created_at": parse_instant(hit.get("created_at"), f"hits[{index}].created_at"),
        "text": text,
        "reply_to": f"hackernews:{parent}" if is_comment and parent else None,
        "conversation_id": f"hackernews:{thread}" if thread else f"hackernews:{item_id}",
        "urls": unique(([url] if url else []) + body.urls),
        "metrics": {"likes": opt_int(hit.get("points")), "replies": opt_int(hit.get("num_comments"))},
        "metadata": metadata,
        "provenance": provenance,
    })
