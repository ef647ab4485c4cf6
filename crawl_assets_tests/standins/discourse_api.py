"""A Discourse JSON API stand-in: ``/posts.json`` (``before=``), ``/t/{id}.json``, ``/t/{id}/posts.json``
(``post_ids[]``), ``/posts/by_number/{topic_id}/{post_number}.json``, ``/categories.json``.

Shapes follow Discourse: ``latest_posts`` newest first, 50 per page, ids below ``before``; a topic
answer with its first 20 posts in ``post_stream.posts`` and every id in ``post_stream.stream``; tags as
names; ``cooked`` HTML with ``<a class="mention">``; small-action posts (``post_type`` 3). Private
forums refuse requests without a known ``Api-Key`` (403 ``invalid_access``); unknown topics are 404
``not_found``; beyond ``rate_limit`` requests a 429 ``rate_limit`` body with ``Retry-After``.
``by_number`` answers one bare post as PostSerializer (``root: false``, ``add_raw``) renders it — the
topic-post fields plus ``raw`` — and 404 ``not_found`` for an unknown or deleted post (what
PostsController#find_post_using raises for anyone but staff). ``Forum.delete_post`` deletes one: it
leaves the latest posts, topic answers and the stream, as for an anonymous reader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from crawl_assets_tests.standins.http_base import Refuse, Reply, Request, StandIn

PAGE = 50
NOT_FOUND = {"errors": ["The requested URL or resource could not be found."], "error_type": "not_found"}
TOPIC_CHUNK = 20
CATEGORIES = [{"id": 5, "name": "Bugs", "slug": "bugs", "subcategory_list": [{"id": 9, "name": "Android", "slug": "android"}]},
              {"id": 6, "name": "پشتیبانی", "slug": "support"}]


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass
class Forum:
    posts: dict[int, dict[str, Any]] = field(default_factory=dict)  # id -> post (topic fields included)
    topics: dict[int, dict[str, Any]] = field(default_factory=dict)
    next_id: int = 1
    deleted: set[int] = field(default_factory=set)

    def delete_post(self, post_id: int) -> None:
        self.deleted.add(post_id)

    def visible(self, post_ids: Any) -> list[int]:
        return [i for i in post_ids if i not in self.deleted]

    def add_topic(self, topic_id: int, title: str, *, category_id: int = 5, tags: list[str] | None = None) -> None:
        self.topics[topic_id] = {"id": topic_id, "title": title, "fancy_title": title, "slug": title.lower().replace(" ", "-"),
                                 "category_id": category_id, "tags": tags or [], "archetype": "regular", "posts": []}

    def add_post(self, topic_id: int, at: datetime, text: str, *, user: str = "alice", reply_to_number: int | None = None,
                 post_type: int = 1) -> dict[str, Any]:
        topic = self.topics[topic_id]
        number = len(topic["posts"]) + 1
        post = {"id": self.next_id, "name": user.title(), "username": user, "user_id": 100 + sum(map(ord, user)) % 50,
                "avatar_template": f"/user_avatar/x/{user}/{{size}}/1.png", "created_at": _iso(at), "updated_at": _iso(at),
                "cooked": text, "post_number": number, "post_type": post_type, "reply_count": 0,
                "reply_to_post_number": reply_to_number, "quote_count": 0, "incoming_link_count": 0, "reads": 3,
                "score": 0.4, "yours": False, "topic_id": topic_id, "topic_slug": topic["slug"], "topic_title": topic["title"],
                "category_id": topic["category_id"], "version": 1, "user_deleted": False, "deleted_at": None, "wiki": False,
                "actions_summary": [{"id": 2, "count": number % 3}]}
        self.posts[self.next_id] = post
        topic["posts"].append(self.next_id)
        self.next_id += 1
        return post


def build_forum(topics: int = 6, replies: int = 30, *, start: datetime | None = None) -> Forum:
    """Topics whose posts interleave in time (so the latest-posts walk touches many topics per page)."""
    forum = Forum()
    start = start or datetime.now(timezone.utc) - timedelta(days=3)
    for t in range(1, topics + 1):
        forum.add_topic(1000 + t, f"Topic {t}", category_id=9 if t % 2 else 6, tags=["crash", f"v{t}"])
    at = start
    for n in range(replies * topics):
        topic_id = 1000 + n % topics + 1
        at += timedelta(minutes=7)
        count = len(forum.topics[topic_id]["posts"])
        if count == 0:
            forum.add_post(topic_id, at, f"<p>The app crashes on start #{n}</p>", user="bob")
        elif n % 11 == 0:
            forum.add_post(topic_id, at, "", user="system", post_type=3)
        elif n % 5 == 0:
            forum.add_post(topic_id, at, f'<p>سلام، این مشکل هنوز هست <a class="mention" href="/u/bob">@bob</a> {n}</p>',
                           user="sara", reply_to_number=1)
        else:
            forum.add_post(topic_id, at, f'<p>Same here, see <a href="https://example.com/i/{n}">log</a></p>',
                           user="carol", reply_to_number=count if n % 2 else None)
    return forum


@dataclass
class DiscourseServer(StandIn):
    forum: Forum = field(default_factory=Forum)
    api_keys: set[str] | None = None  # None: a public forum
    rate_limit: int = 100_000
    retry_after: int = 1

    def __post_init__(self) -> None:
        super().__init__()
        self.served = 0

    def endpoint_of(self, req: Request) -> str:
        if req.path == "/posts.json":
            return "posts"
        if req.path.startswith("/posts/by_number/"):
            return "post_by_number"
        if req.path == "/categories.json":
            return "categories"
        return "topic_posts" if req.path.endswith("/posts.json") else "topic"

    def route(self, req: Request) -> Reply:
        if self.api_keys is not None and req.headers.get("api-key") not in self.api_keys:
            raise Refuse(403, {"errors": ["You are not permitted to view the requested resource."], "error_type": "invalid_access"})
        self.served += 1
        if self.served > self.rate_limit:
            raise Refuse(429, {"errors": ["You’ve performed this action too many times. Please wait 1 second before trying again."],
                               "error_type": "rate_limit", "extras": {"wait_seconds": self.retry_after}},
                         {"Retry-After": str(self.retry_after)})
        if req.path == "/posts.json":
            before = int(req.arg("before") or 0) or None
            ids = sorted(self.forum.visible(i for i in self.forum.posts if before is None or i < before), reverse=True)[:PAGE]
            return Reply(200, {"latest_posts": [self.forum.posts[i] for i in ids]})
        if req.path == "/categories.json":
            return Reply(200, {"category_list": {"can_create_category": False, "categories": CATEGORIES}})
        parts = req.path.strip("/").split("/")
        if parts[:2] == ["posts", "by_number"]:
            return Reply(200, self._by_number(parts))
        try:
            topic = self.forum.topics[int(parts[1].removesuffix(".json"))]
        except (KeyError, ValueError, IndexError):
            raise Refuse(404, NOT_FOUND) from None
        stream = self.forum.visible(topic["posts"])
        if len(parts) == 3:
            wanted = [int(v) for v in req.query.get("post_ids[]", [])]
            posts = [self._topic_post(i) for i in wanted if i in stream]
            return Reply(200, {"post_stream": {"posts": posts}, "id": topic["id"]})
        body = {k: v for k, v in topic.items() if k != "posts"}
        body["posts_count"] = len(stream)
        body["post_stream"] = {"posts": [self._topic_post(i) for i in stream[:TOPIC_CHUNK]], "stream": stream}
        return Reply(200, body)

    def _by_number(self, parts: list[str]) -> dict[str, Any]:
        """``/posts/by_number/{topic_id}/{post_number}.json``: the post with ``raw``, or 404 when unknown or deleted."""
        try:
            topic = self.forum.topics[int(parts[2])]
            post_id = topic["posts"][int(parts[3].removesuffix(".json")) - 1]
        except (KeyError, ValueError, IndexError):
            raise Refuse(404, NOT_FOUND) from None
        if post_id in self.forum.deleted:
            raise Refuse(404, NOT_FOUND)
        post = self._topic_post(post_id)
        return {**post, "raw": re.sub(r"<[^>]+>", "", post["cooked"])}

    def _topic_post(self, post_id: int) -> dict[str, Any]:
        """Posts inside topic answers carry no topic_title/category_id (Discourse omits them there)."""
        return {k: v for k, v in self.forum.posts[post_id].items() if k not in ("topic_title", "category_id")}
