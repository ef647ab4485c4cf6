"""Discourse normalizer (format ``discourse``): envelope lines of ``/posts.json``, ``/t/{id}.json``,
``/t/{id}/posts.json``, ``/posts/by_number/{topic}/{n}.json`` and ``/categories.json`` answers → one
record per post.

Keys are ``discourse:{host}:{post_id}``. A categories line and topic lines give later lines of the same
stream their category name/slug and topic tags (the sync writes them first in every batch). Replies:
``reply_to_post_number`` is a number inside the topic, resolved to a post id through every post of the
topic in the stream (the whole batch: a post whose target comes later waits for the end of the stream,
at most ``PENDING_LIMIT`` of them at a time); a post without it replies to the topic's first post. When
the target is not in the stream, ``reply_to`` stays empty and ``metadata.reply_to_post_number`` keeps the
number. A single-post answer (the sync fetches reply targets missing from a batch that way) is context
only: it teaches its number → id and yields no record, so a partial re-observation (no category, tags or
topic title, its own target unresolved) never replaces the full record stored before.
A post read without its topic's context, or whose reply target or quoted post the stream lacks, is flagged
``context_missing``: the pipeline keeps what an earlier observation knew of it (``merge_earlier``).
Moderator/small actions ("closed the topic") are reported as non-posts.

A quoted post (``<aside class="quote" data-topic data-post>`` in ``cooked``) is not the author's text: it is
left out of ``text`` and the first quoted post resolved (a post number is per topic, like a reply target, and
waits the same way) becomes ``quote_of``; ``metadata.quoted_posts`` names every quote's topic, number and author.
"""

from __future__ import annotations

import html
import re
from collections import deque
from collections.abc import Iterator
from typing import IO, Any

from crawl_assets.normalize.build import (
    CONTEXT_MISSING, Batch, InputError, Item, as_dict, as_id, as_list, crawl_field, media_doc, normalize_envelopes,
    opt_int, opt_str, parse_instant,
)  # fmt: skip
from crawl_assets.normalize.damage import with_flag
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.persons import PersonIds
from crawl_assets.normalize.text import fold_tag, html_text, unique

PERSONS = PersonIds(  # a post's author is its user_id (one forum's); topics list participants and posters
    owner_keys=("user_id",), containers=("participants", "users"), per_site=True,
)

FORMAT = "discourse"
LIKE_ACTION = 2
ACTION_POST_TYPES = {2: "moderator action", 3: "small action"}
PENDING_LIMIT = 20_000  # posts waiting for a target later in the stream; beyond it the oldest go out unresolved


def reply_target(post: dict[str, Any]) -> int | None:
    """The post number a post replies to: its ``reply_to_post_number``, else the topic's first post
    (none for the first post itself). Shared with the sync, which fetches targets a batch lacks."""
    reply_number = opt_int(post.get("reply_to_post_number"))
    number = opt_int(post.get("post_number"))
    return reply_number if reply_number else (1 if number and number > 1 else None)


_ASIDE_TAG = re.compile(r"<(/?)aside\b([^>]*)>", re.IGNORECASE)
_ATTRIBUTE = re.compile(r'([\w-]+)\s*=\s*"([^"]*)"')


def quote_targets(post: dict[str, Any]) -> list[tuple[int, int, str | None]]:
    """(topic id, post number, username) of every post ``post`` quotes (its own quotes, not quotes inside them);
    a quote without ``data-topic`` is of the post's own topic. Shared with the sync, which fetches them."""
    cooked = post.get("cooked")
    if not isinstance(cooked, str) or "<aside" not in cooked:
        return []
    found, depth = [], 0
    for match in _ASIDE_TAG.finditer(cooked):
        if match.group(1):
            depth = max(depth - 1, 0)
            continue
        depth += 1
        attrs = dict(_ATTRIBUTE.findall(match.group(2)))
        if depth > 1 or "quote" not in attrs.get("class", "").split():
            continue
        topic, number = opt_int(attrs.get("data-topic")) or opt_int(post.get("topic_id")), opt_int(attrs.get("data-post"))
        if topic and number:
            found.append((topic, number, html.unescape(attrs["data-username"]) if attrs.get("data-username") else None))
    return found


def is_single_post(response: Any) -> bool:
    """A ``/posts/{id}.json`` or ``/posts/by_number/…`` answer: one bare post object."""
    return isinstance(response, dict) and "post_number" in response and "topic_id" in response and "id" in response


class _Forum:
    """What the stream has taught so far: categories, topics, post numbers → ids."""

    def __init__(self) -> None:
        self.categories: dict[int, dict[str, Any]] = {}
        self.topics: dict[int, dict[str, Any]] = {}
        self.numbers: dict[tuple[int, int], str] = {}

    def waits_for_target(self, post: Any) -> bool:
        """Whether ``post`` replies to a post number not seen yet (it may come later in the stream)."""
        if not isinstance(post, dict) or not isinstance(post.get("topic_id"), int):
            return False
        target = reply_target(post)
        if target is not None and (post["topic_id"], target) not in self.numbers:
            return True
        return any((topic, number) not in self.numbers for topic, number, _ in quote_targets(post))

    def learn_categories(self, response: dict[str, Any]) -> None:
        for cat in as_list(as_dict(response.get("category_list")).get("categories")):
            cat = as_dict(cat)
            if isinstance(cat.get("id"), int):
                self.categories[cat["id"]] = cat
                for sub in as_list(cat.get("subcategory_list")):
                    if isinstance(as_dict(sub).get("id"), int):
                        self.categories[sub["id"]] = sub

    def learn_topic(self, topic: dict[str, Any]) -> None:
        if isinstance(topic.get("id"), int):
            tags = [t if isinstance(t, str) else as_dict(t).get("name") for t in as_list(topic.get("tags"))]
            self.topics[topic["id"]] = {"title": opt_str(topic.get("title")), "slug": opt_str(topic.get("slug")),
                                        "category_id": opt_int(topic.get("category_id")),
                                        "tags": [t for t in tags if isinstance(t, str)]}

    def learn_posts(self, posts: list[Any]) -> None:
        for post in posts:
            post = as_dict(post)
            if isinstance(post.get("topic_id"), int) and isinstance(post.get("post_number"), int) and "id" in post:
                self.numbers[(post["topic_id"], post["post_number"])] = str(post["id"])


def normalize_discourse(stream: IO[bytes], *, name: str, context: NormalizeContext, validate: bool = True) -> Iterator[Item]:
    """Records of one raw batch of Discourse answers (streamed, one answer per line)."""
    batch = Batch(FORMAT, name, context, validate=validate)
    forum = _Forum()
    pending: deque[tuple[int, str, Any, int, dict[str, Any]]] = deque()

    def build(line: int, host: str, post: Any, index: int, provenance: dict[str, Any]) -> Item:
        return batch.guard(line, post, _post, batch, forum, host, post, index, provenance)

    def read(line: int, raw: bytes, crawl: dict[str, Any], response: Any, provenance: dict[str, Any]) -> Iterator[Item]:
        host = crawl_field(crawl, "host")
        posts = _posts_of(response, forum)
        forum.learn_posts(posts)
        if is_single_post(response):
            return
        stored = crawl.get("stored_through")  # a latest-posts page: posts up to this id came in an earlier sync
        for index, post in enumerate(posts):
            if isinstance(stored, int) and isinstance(as_dict(post).get("id"), int) and post["id"] <= stored:
                continue  # context only (its number -> id is learned): its record is already stored
            post_type = opt_int(as_dict(post).get("post_type"))
            if post_type in ACTION_POST_TYPES:
                yield batch.reject(line, f"post {as_dict(post).get('id')}: {ACTION_POST_TYPES[post_type]}", post, error=False)
            elif forum.waits_for_target(post):
                pending.append((line, host, post, index, provenance))
                if len(pending) > PENDING_LIMIT:
                    yield build(*pending.popleft())
            else:
                yield build(line, host, post, index, provenance)

    def items() -> Iterator[Item]:
        yield from normalize_envelopes(stream, batch, read)
        while pending:
            yield build(*pending.popleft())

    return items()


def _posts_of(response: Any, forum: _Forum) -> list[Any]:
    """The posts an answer holds, after learning its categories/topic context."""
    if not isinstance(response, dict):
        raise InputError("field 'response': not a JSON object")
    if "category_list" in response:
        forum.learn_categories(response)
        return []
    if "latest_posts" in response:
        return as_list(response["latest_posts"])
    if "post_stream" in response:
        if "title" in response:
            forum.learn_topic(response)
        posts = as_list(as_dict(response["post_stream"]).get("posts"))
        return posts
    if is_single_post(response):
        return [response]
    raise InputError("field 'response': not a Discourse posts, topic, post or categories answer")


def _post(batch: Batch, forum: _Forum, host: str, post: Any, index: int, provenance: dict[str, Any]) -> Item:
    if not isinstance(post, dict):
        raise InputError(f"posts[{index}]: not a JSON object")
    post_id = as_id(post.get("id"), f"posts[{index}].id")
    topic_id = opt_int(post.get("topic_id"))
    number = opt_int(post.get("post_number"))
    topic = forum.topics.get(topic_id or -1, {})
    category_id = opt_int(post.get("category_id")) or topic.get("category_id")
    category = as_dict(forum.categories.get(category_id or -1))
    reply_number = opt_int(post.get("reply_to_post_number"))
    target = reply_target(post)
    reply_to = forum.numbers.get((topic_id, target)) if topic_id is not None and target else None
    quotes = quote_targets(post)
    quoted = next((found for t, n, _ in quotes if (found := forum.numbers.get((t, n))) and found != post_id), None)
    kind = "post" if number == 1 else "reply" if reply_number else "comment"
    body = html_text(opt_str(post.get("cooked")) or opt_str(post.get("raw")) or "", base_url=f"https://{host}/")
    created_at = parse_instant(post.get("created_at"), f"posts[{index}].created_at")
    edited = (opt_int(post.get("version")) or 1) > 1
    deleted_at = opt_str(post.get("deleted_at"))
    likes = next((opt_int(a.get("count")) for a in as_list(post.get("actions_summary"))
                  if isinstance(a, dict) and a.get("id") == LIKE_ACTION), None)
    slug = opt_str(post.get("topic_slug")) or topic.get("slug")
    title = opt_str(post.get("topic_title")) or topic.get("title")
    if title is None or (target and reply_to is None) or (quotes and quoted is None):
        provenance = with_flag(provenance, CONTEXT_MISSING)  # its topic, or a post it points to, is not in the batch
    metadata = {k: v for k, v in {
        "topic_id": topic_id,
        "topic_title": title,
        "topic_slug": slug,
        "post_number": number,
        "reply_to_post_number": reply_number,
        "category_id": category_id,
        "category_name": opt_str(category.get("name")),
        "category_slug": opt_str(category.get("slug")),
        "tags": topic.get("tags") or None,
        "post_type": opt_int(post.get("post_type")),
        "whisper": post.get("post_type") == 4 or None,
        "wiki": post.get("wiki") or None,
        "user_title": opt_str(post.get("user_title")),
        "quoted_posts": [{"topic_id": t, "post_number": n, "username": u} for t, n, u in quotes] or None,
        "url": f"https://{host}/t/{slug or 'topic'}/{topic_id}/{number}" if topic_id and number else None,
    }.items() if v is not None}
    return batch.finish({
        "key": f"discourse:{host}:{post_id}",
        "platform": "discourse",
        "kind": kind,
        "native_id": post_id,
        "author_id": str(post["user_id"]) if isinstance(post.get("user_id"), int) else None,
        "author_handle": opt_str(post.get("username")),
        "created_at": created_at,
        "edited_at": parse_instant(post["updated_at"], f"posts[{index}].updated_at") if edited and post.get("updated_at") else None,
        "deleted": bool(deleted_at) or post.get("user_deleted") is True,
        "deleted_at": parse_instant(deleted_at, f"posts[{index}].deleted_at") if deleted_at else None,
        "text": body.text,
        "reply_to": f"discourse:{host}:{reply_to}" if reply_to and reply_to != post_id else None,
        "quote_of": f"discourse:{host}:{quoted}" if quoted else None,
        "conversation_id": f"discourse:{host}:topic:{topic_id}" if topic_id is not None else None,
        "mentions": unique([fold_tag(m) for m in body.mentions]),
        "urls": unique(body.urls),
        "media": [media_doc(**m) for m in body.media],  # uploads: a post may be an image and nothing else
        "metrics": {"likes": likes if likes is not None else opt_int(post.get("like_count")),
                    "replies": opt_int(post.get("reply_count")), "quotes": opt_int(post.get("quote_count")),
                    "views": opt_int(post.get("reads"))},
        "metadata": metadata,
        "provenance": provenance,
    })
