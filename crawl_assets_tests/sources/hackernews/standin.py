"""An Algolia Hacker News search stand-in: ``GET /api/v1/search_by_date``.

Speaks ``query``, ``tags`` (``story``, ``comment``, ``(story,comment)``), ``numericFilters`` on
``created_at_i`` (``>``, ``>=``, ``<``, ``<=``), ``page``/``hitsPerPage`` with Algolia's 1,000-hit pagination
cap (``nbHits`` still counts everything, ``nbPages`` stops at the cap), newest first; a 400 body for a
filter it cannot parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from crawl_assets_tests.standins.http_base import Refuse, Reply, Request, StandIn

CAP = 1000
_FILTER = re.compile(r"^created_at_i(>=|<=|>|<)(\d+)$")


def make_items(stories: int, comments_per_story: int, *, start: datetime | None = None) -> list[dict[str, Any]]:
    """Stories and comment threads, one item per minute, newest last."""
    at = start or datetime.now(timezone.utc) - timedelta(days=2)
    items: list[dict[str, Any]] = []
    next_id = 40_000_000
    for s in range(stories):
        at += timedelta(minutes=1)
        story_id = next_id
        next_id += 1
        items.append({"objectID": str(story_id), "created_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                      "created_at_i": int(at.timestamp()), "author": f"user{s}", "title": f"Show HN: feedback tool {s}",
                      "url": f"https://example.com/{s}", "story_text": None, "comment_text": None, "points": 10 + s,
                      "num_comments": comments_per_story, "story_id": None, "parent_id": None,
                      "_tags": ["story", f"author_user{s}", f"story_{story_id}"]})
        parent = story_id
        for c in range(comments_per_story):
            at += timedelta(minutes=1)
            items.append({"objectID": str(next_id), "created_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                          "created_at_i": int(at.timestamp()), "author": f"c{c}",
                          "comment_text": f"<p>Nice feedback tool, see <a href=\"https://ex.org/{c}\">this</a></p>",
                          "story_id": story_id, "parent_id": parent, "story_title": f"Show HN: feedback tool {s}",
                          "points": None, "_tags": ["comment", f"author_c{c}", f"story_{story_id}"]})
            parent = next_id
            next_id += 1
    return items


@dataclass
class HackerNewsServer(StandIn):
    items: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    def endpoint_of(self, req: Request) -> str:
        return "search_by_date"

    def route(self, req: Request) -> Reply:
        if req.path != "/api/v1/search_by_date":
            raise Refuse(404, {"message": "Not Found", "status": 404})
        query = (req.arg("query") or "").lower()
        tags = (req.arg("tags") or "").strip("()").split(",")
        hits = [i for i in self.items if (not query or query in (i.get("title") or i.get("comment_text") or "").lower())
                and (tags == [""] or any(t in i["_tags"] for t in tags))]
        for raw in filter(None, (req.arg("numericFilters") or "").split(",")):
            match = _FILTER.match(raw.strip())
            if not match:
                raise Refuse(400, {"message": f"invalid numericFilters: {raw}", "status": 400})
            op, value = match.group(1), int(match.group(2))
            hits = [i for i in hits if {">": i["created_at_i"] > value, ">=": i["created_at_i"] >= value,
                                        "<": i["created_at_i"] < value, "<=": i["created_at_i"] <= value}[op]]
        hits.sort(key=lambda i: (i["created_at_i"], int(i["objectID"])), reverse=True)
        per_page = int(req.arg("hitsPerPage") or 20)
        page = int(req.arg("page") or 0)
        reachable = hits[:CAP]
        pages = -(-len(reachable) // per_page)
        return Reply(200, {"hits": reachable[page * per_page:(page + 1) * per_page], "nbHits": len(hits), "page": page,
                           "nbPages": pages, "hitsPerPage": per_page, "exhaustiveNbHits": True, "query": query,
                           "params": f"query={query}"})
