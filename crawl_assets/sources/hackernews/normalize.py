"""Hacker News normalizer (format ``hackernews``): Algolia ``search_by_date`` pages → one record per hit.

Keys are ``hackernews:{item_id}`` (the HN item id, same as the Firebase API's). Stories and polls are
``post`` (text: title, then the story text), comments are ``comment`` replying to ``parent_id`` in the thread
``story_id``. A poll option (tag ``pollopt``) is a ``poll_option``: not a story, it links to its poll
(``metadata.poll``, the poll's key) and belongs to the poll's conversation. Points → ``metrics.likes``
(a poll option's votes), ``num_comments`` → ``metrics.replies``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from crawl_assets.normalize.build import Batch, InputError, Item, as_id, as_list, opt_int, opt_str, parse_instant
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.persons import PersonIds
from crawl_assets.normalize.text import unique
from crawl_assets.sources.envelope import normalize_envelopes
from crawl_assets.sources.html_text import html_text

PERSONS = PersonIds(owner_keys=("author",))  # Algolia hits name their author by username, the author_id

FORMAT = "hackernews"


def normalize_hackernews(stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True) -> Iterator[Item]:
    """Records of one raw batch of search pages (one envelope per line)."""
    batch = Batch(FORMAT, name, context, validate=validate)

    def read(line: int, raw: bytes, crawl: dict[str, Any], response: Any, provenance: dict[str, Any]) -> Iterator[Item]:
        if not isinstance(response, dict) or not isinstance(response.get("hits"), list):
            raise InputError("field 'response.hits': missing or not a list")
        for index, hit in enumerate(response["hits"]):
            yield batch.guard(line, hit, _hit, batch, hit, index, provenance)

    return normalize_envelopes(stream, batch, read)


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
