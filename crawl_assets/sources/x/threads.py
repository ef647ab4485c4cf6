"""Thread completion: which parents of replies and quotes are missing, and remembering what was tried.

Only a page's ``data`` posts become records, so only they count as held: a parent that appears only in
``includes.tweets`` (the ``referenced_tweets.id`` expansion) is still fetched, once, so that it becomes
a record and the conversation is whole whatever way the pages were split across runs.
Ids fetched or found missing are remembered so they are never asked for again. That memory grows with
the data, so it lives in the lake (``state/{tenant}/x/{source}/threads.json.gz``), not in the
checkpoint, which must stay small.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from crawl_assets.lake import Lake
from crawl_assets.lake.layout import state_file

PARENT_TYPES = ("replied_to", "quoted")


@dataclass
class PageRefs:
    """Post ids a set of pages holds, the parent ids they point to, and ids X reported as gone."""

    have: set[str] = field(default_factory=set)
    wanted: set[str] = field(default_factory=set)
    gone: set[str] = field(default_factory=set)

    def add_page(self, body: dict[str, Any]) -> None:
        data = body.get("data")
        posts = data if isinstance(data, list) else [data] if isinstance(data, dict) else []
        for post in posts:
            if not isinstance(post, dict) or "id" not in post:
                continue
            self.have.add(str(post["id"]))
            for ref in post.get("referenced_tweets") or []:
                if isinstance(ref, dict) and ref.get("type") in PARENT_TYPES and ref.get("id"):
                    self.wanted.add(str(ref["id"]))
        for err in body.get("errors") or []:
            if isinstance(err, dict) and err.get("resource_type") == "tweet" and err.get("resource_id"):
                self.gone.add(str(err["resource_id"]))

    def missing(self, known: set[str]) -> set[str]:
        """Parents neither on these pages, nor reported gone, nor already tried."""
        return self.wanted - self.have - self.gone - known


class ThreadMemory(Protocol):
    def load(self) -> tuple[set[str], list[str]]:
        """(ids already held or tried, ids still waiting to be fetched)."""

    def save(self, known: set[str], pending: list[str]) -> None: ...


class LakeThreadMemory:
    """:class:`ThreadMemory` in one gzip JSON file per source, replaced atomically."""

    def __init__(self, lake: Lake, tenant: str, platform: str, source: str):
        self.lake = lake
        self.relative = state_file(tenant, platform, source, "threads.json.gz")

    def load(self) -> tuple[set[str], list[str]]:
        raw = self.lake.read_bytes(self.relative)
        if raw is None:
            return set(), []
        doc = orjson.loads(gzip.decompress(raw))
        return set(doc.get("known", [])), list(doc.get("pending", []))

    def save(self, known: set[str], pending: list[str]) -> None:
        doc = {"known": sorted(known, key=lambda i: (len(i), i)), "pending": pending}
        self.lake.write_bytes(self.relative, gzip.compress(orjson.dumps(doc), mtime=0))

