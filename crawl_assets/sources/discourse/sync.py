"""The Discourse sync engine: latest posts walked back by id, each touched topic completed.

State (the checkpoint)::

    newest_id   cursor: every post with a higher id than the previous cursor up to this one is stored
    walk        an unfinished walk down /posts.json: {before, top, floor, cutoff}
    topics      {topic_id: highest post id stored}, the most recent ``TOPIC_MEMORY`` topics only

A walk pages ``/posts.json?before=`` from the newest post down to ``floor`` (the previous cursor) — or,
on a first sync, down to ``history_horizon_days`` (everything when unset). For every topic a page
touches it fetches ``/t/{id}.json`` and then, twenty ids per request, the posts of its
``post_stream.stream`` that are neither on that answer, nor stored before, nor still ahead in this walk:
so a topic is stored with all its posts even when only its newest reply was new. Each page is stored
right after its topics, in one batch with the categories answer (names and slugs for metadata).

Reply targets: a batch must resolve its replies alone (normalization is a function of one batch), so
before a batch is stored the posts its replies point to (``reply_to_post_number``, else the topic's first
post) and the posts they quote that no line of the batch holds are fetched one by one with
``/posts/by_number/{topic}/{n}.json``
and put first in the batch. At most ``max_parent_fetches`` such requests per sync; a 403/404/410 is a
deleted (or hidden) target, counted, not an error; an answer is reused for later batches of the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from crawl_assets.registry import SourceEntry
from crawl_assets.sources.discourse.client import IDS_PER_REQUEST, DiscourseClient, forum_host
from crawl_assets.sources.discourse.normalize import ACTION_POST_TYPES, quote_targets, reply_target
from crawl_assets.sources.discourse.spec import DiscourseOptions
from crawl_assets.normalize.build import wrap_line
from crawl_assets.sdk.sync import Budget, PageBuffer, StoreBatch, SyncResult, SyncStats, begin, require_kind
from crawl_assets.sdk.errors import PermanentError, TransientError
from crawl_assets.sdk.http import Page

RAW_FORMAT = "discourse"
TOPIC_MEMORY = 300
GONE = (403, 404, 410)  # a deleted topic or post, or one in a category this key cannot read
PostRef = tuple[int, int]  # (topic_id, post_number)


def _created(post: dict[str, Any]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(post.get("created_at")).replace("Z", "+00:00"))
    except ValueError:
        return None


class _ReplyAwareBuffer(PageBuffer):
    """A page buffer that knows which posts its batch holds and which posts their replies point to; before
    a batch is stored, ``fetch_missing`` gets the lines of the targets the batch lacks (they go first)."""

    def __init__(self, store: StoreBatch, stats: SyncStats, pages_per_batch: int,
                 fetch_missing: Callable[[list[PostRef]], list[bytes]]):
        super().__init__(store, stats, pages_per_batch)
        self.fetch_missing = fetch_missing
        self.held: set[PostRef] = set()
        self.targets: dict[PostRef, None] = {}  # ordered set

    def note(self, posts: Any, targets_of: list[Any] | None = None) -> None:
        """Remember the posts of a line about to be added (call before ``add``: it may flush); only the
        replies among ``targets_of`` (default: all) need their targets (older posts are context only)."""
        wanted = None if targets_of is None else {id(p) for p in targets_of}
        for post in posts if isinstance(posts, list) else []:
            if not isinstance(post, dict) or not isinstance(post.get("topic_id"), int):
                continue
            if isinstance(post.get("post_number"), int):
                self.held.add((post["topic_id"], post["post_number"]))
            if wanted is not None and id(post) not in wanted:
                continue
            if post.get("post_type") in ACTION_POST_TYPES:
                continue
            target = reply_target(post)
            if target is not None:
                self.targets[(post["topic_id"], target)] = None
            for topic, number, _ in quote_targets(post):
                self.targets[(topic, number)] = None

    def flush(self, state: dict[str, Any]) -> None:
        if self.lines:
            missing = [ref for ref in self.targets if ref not in self.held]
            if missing:
                self.lines[:0] = self.fetch_missing(missing)
        self.held, self.targets = set(), {}
        super().flush(state)


def _stream_posts(answer: Any) -> Any:
    """``post_stream.posts`` of a topic or topic-posts answer, as given."""
    return (answer.get("post_stream") or {}).get("posts") if isinstance(answer, dict) else None


class _ForumSync:
    def __init__(self, client: DiscourseClient, entry: SourceEntry, state: dict[str, Any], store: StoreBatch,
                 budget: Budget, clock: Callable[[], float]):
        self.client, self.entry, self.budget, self.clock = client, entry, budget, clock
        require_kind(entry, "forum", "Discourse")
        self.options: DiscourseOptions = entry.typed_options  # parsed and validated by the registry
        self.host = forum_host(entry.identifier)
        self.state, self.stats, _ = begin(state, store, self.options.pages_per_batch)
        self.buffer = _ReplyAwareBuffer(store, self.stats, self.options.pages_per_batch, self.fetch_parents)
        self.topics: dict[str, int] = dict(self.state.get("topics") or {})
        self.completed: set[int] = set()  # topics completed in this run: the walk covers the rest of them
        self.parents: dict[PostRef, bytes | None] = {}  # reply targets fetched this run (None: gone)
        self.stats.extra.update(reply_parents_fetched=0, reply_parents_missing=0, reply_parents_skipped=0)

    def line(self, page: Page, **extra: Any) -> bytes:
        return wrap_line(page.body, endpoint=page.endpoint, host=self.host,
                         retrieved_at=datetime.fromtimestamp(self.clock(), timezone.utc).isoformat(), **extra)

    def run(self) -> SyncResult:
        state = self.state
        if not state.get("walk"):
            floor = int(state.get("newest_id") or 0)
            horizon = self.entry.policy.history_horizon_days
            cutoff = (datetime.fromtimestamp(self.clock(), timezone.utc) - timedelta(days=horizon)).isoformat() \
                if horizon and not floor else None
            state["walk"] = {"before": None, "top": floor, "floor": floor, "cutoff": cutoff}
        walk = state["walk"]
        if self.budget.allows(self.client.stats, self.clock):
            self.buffer.preamble = [self.line(self.client.categories())]
        while self.budget.allows(self.client.stats, self.clock):
            page = self.client.latest_posts(walk["before"])
            posts = page.json.get("latest_posts") if isinstance(page.json, dict) else None
            if not isinstance(posts, list):
                raise TransientError("discourse posts: answer without 'latest_posts'", endpoint=page.endpoint)
            cutoff = datetime.fromisoformat(walk["cutoff"]) if walk["cutoff"] else None
            keep = [p for p in posts if int(p["id"]) > walk["floor"]
                    and (cutoff is None or (_created(p) or cutoff) >= cutoff)]
            lowest = min((int(p["id"]) for p in posts), default=0)
            if keep and self.options.complete_topics:
                self.complete_topics(keep, walk["floor"], lowest)
            if keep:
                self.count(keep)
                walk["top"] = max(walk["top"], max(int(p["id"]) for p in keep))
            walk["before"] = lowest
            done = len(keep) < len(posts) or not posts or lowest <= 1
            if done:
                state["newest_id"] = walk["top"]
                state.pop("walk")
                self.stats.complete = True
            self.save_topics()
            if keep:
                self.buffer.note(posts, targets_of=keep)
                extra = {"stored_through": walk["floor"]} if walk["floor"] else {}
                self.buffer.add(self.line(page, **extra), state)
            if done:
                break
        self.save_topics()
        self.buffer.flush(state)
        self.stats.extra.update(newest_id=state.get("newest_id") or 0, topics_remembered=len(self.topics))
        return SyncResult(state, self.stats)

    def count(self, posts: list[dict[str, Any]]) -> None:
        for post in posts:
            self.stats.fetched += 1
            self.stats.new += 1
            self.stats.saw(_created(post))

    def complete_topics(self, posts: list[dict[str, Any]], floor: int, lowest: int) -> None:
        """Fetch each touched topic and the posts of it this walk will not see."""
        on_page = {int(p["id"]) for p in posts}
        for topic_id in dict.fromkeys(int(p["topic_id"]) for p in posts):
            if topic_id in self.completed:
                continue
            if not self.budget.allows(self.client.stats, self.clock):
                return
            self.completed.add(topic_id)
            try:
                page = self.client.topic(topic_id)
            except PermanentError as exc:
                if exc.status not in GONE:
                    raise
                # a deleted topic, or one in a category this key cannot read: the forum itself is fine
                self.stats.extra["topics_unavailable"] = self.stats.extra.get("topics_unavailable", 0) + 1
                continue
            topic = page.json if isinstance(page.json, dict) else {}
            stream_posts = (topic.get("post_stream") or {})
            have = on_page | {int(p["id"]) for p in stream_posts.get("posts") or []}
            known = self.topics.get(str(topic_id), 0)
            stream = [int(i) for i in stream_posts.get("stream") or []][: self.options.max_topic_posts]
            # ids the walk reaches later are left to it; with a first-sync cutoff it may stop before them
            ahead = (lambda i: floor < i < lowest) if not self.state["walk"]["cutoff"] else (lambda i: False)
            missing = [i for i in stream if i not in have and i > known and not ahead(i)]
            self.buffer.note(_stream_posts(topic))
            self.buffer.add(self.line(page), self.state, page=False)
            self.stats.extra["topics_fetched"] = self.stats.extra.get("topics_fetched", 0) + 1
            for start in range(0, len(missing), IDS_PER_REQUEST):
                if not self.budget.allows(self.client.stats, self.clock):
                    break
                chunk = self.client.topic_posts(topic_id, missing[start:start + IDS_PER_REQUEST])
                chunk_posts = _stream_posts(chunk.json)
                self.buffer.note(chunk_posts)
                self.buffer.add(self.line(chunk, topic_id=topic_id), self.state, page=False)
                got = len(chunk_posts) if isinstance(chunk_posts, list) else 0
                self.stats.fetched += got
                self.stats.extra["topic_posts_fetched"] = self.stats.extra.get("topic_posts_fetched", 0) + got
            self.topics.pop(str(topic_id), None)
            self.topics[str(topic_id)] = max([known, *stream])

    def fetch_parents(self, refs: list[PostRef]) -> list[bytes]:
        """The lines of the reply targets a batch lacks: fetched (within ``max_parent_fetches`` and the
        budget) or reused from an earlier batch of this run; a gone target is counted and left out."""
        lines: list[bytes] = []
        extra = self.stats.extra
        for ref in refs:
            if ref not in self.parents:
                if (extra["reply_parents_fetched"] + extra["reply_parents_missing"] >= self.options.max_parent_fetches
                        or not self.budget.allows(self.client.stats, self.clock)):
                    extra["reply_parents_skipped"] += 1
                    continue
                try:
                    self.parents[ref] = self.line(self.client.post_by_number(*ref))
                    extra["reply_parents_fetched"] += 1
                except PermanentError as exc:
                    if exc.status not in GONE:
                        raise
                    self.parents[ref] = None
                    extra["reply_parents_missing"] += 1
            line = self.parents[ref]
            if line is not None:
                lines.append(line)
        return lines

    def save_topics(self) -> None:
        while len(self.topics) > TOPIC_MEMORY:
            self.topics.pop(next(iter(self.topics)))
        self.state["topics"] = dict(self.topics)


def sync_forum(client: DiscourseClient, entry: SourceEntry, state: dict[str, Any], store: StoreBatch,
               budget: Budget, *, clock: Callable[[], float] = time.time) -> SyncResult:
    """Store the forum's posts newer than the cursor (and their topics, complete); resumable per page."""
    return _ForumSync(client, entry, state, store, budget, clock).run()
