"""The Hacker News sync engine: a search query's items newer than the cursor, walked newest first.

State::

    newest_at   cursor (epoch seconds): items created after it are fetched next time
    walk        an unfinished walk: {floor, at_most, page, top, oldest}

A walk asks ``created_at_i > floor`` page by page; at Algolia's 1,000-hit cap it continues with a new
window ``created_at_i <= oldest seen``. A first sync starts ``history_horizon_days`` back (default 7).
The cursor is the newest item's second minus one, so items of that same second are re-read (dedupe
keeps one), never skipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from crawl_assets.registry import SourceEntry
from crawl_assets.normalize.build import wrap_line
from crawl_assets.sources.hackernews.client import HackerNewsClient
from crawl_assets.sources.hackernews.spec import HackerNewsOptions
from crawl_assets.sdk.sync import Budget, StoreBatch, SyncResult, begin, require_kind
from crawl_assets.sdk.errors import TransientError

RAW_FORMAT = "hackernews"
DEFAULT_HORIZON_DAYS = 7


def sync_search(client: HackerNewsClient, entry: SourceEntry, state: dict[str, Any], store: StoreBatch,
                budget: Budget, *, clock: Callable[[], float] = time.time) -> SyncResult:
    """Store the query's items newer than the cursor; resumable at any page."""
    require_kind(entry, "search_query", "Hacker News")
    options: HackerNewsOptions = entry.typed_options  # parsed and validated by the registry
    state, stats, buffer = begin(state, store, options.pages_per_batch)
    if not state.get("walk"):
        floor = state.get("newest_at")
        if floor is None:
            floor = int(clock()) - 86_400 * (entry.policy.history_horizon_days or DEFAULT_HORIZON_DAYS)
        state["walk"] = {"floor": int(floor), "at_most": None, "page": 0, "top": int(floor) + 1, "oldest": None}
    w = state["walk"]
    while budget.allows(client.stats, clock):
        page = client.search_by_date(entry.identifier, tags=options.tags, after=w["floor"], at_most=w["at_most"],
                                     page=w["page"], hits_per_page=options.hits_per_page)
        body = page.json if isinstance(page.json, dict) else {}
        hits = body.get("hits")
        if not isinstance(hits, list):
            raise TransientError("hackernews search_by_date: answer without 'hits'", endpoint=page.endpoint)
        for hit in hits:
            created = int(hit.get("created_at_i") or 0)
            w["top"] = max(w["top"], created)
            w["oldest"] = created if w["oldest"] is None else min(w["oldest"], created)
            stats.fetched += 1
            stats.new += 1
            stats.saw(datetime.fromtimestamp(created, timezone.utc))
        pages, hits_total = int(body.get("nbPages") or 0), int(body.get("nbHits") or 0)
        if w["page"] + 1 < pages:
            w["page"] += 1
        elif hits and hits_total > pages * options.hits_per_page:  # Algolia's cap: continue below
            w.update(at_most=w["oldest"], page=0)
        else:
            state["newest_at"] = w["top"] - 1
            state.pop("walk")
            stats.complete = True
        if hits or stats.complete:
            buffer.add(wrap_line(page.body, endpoint=page.endpoint, query=entry.identifier, tags=options.tags,
                                 retrieved_at=datetime.fromtimestamp(clock(), timezone.utc).isoformat()), state)
        if stats.complete:
            break
    buffer.flush(state)
    stats.extra["newest_at"] = state.get("newest_at") or 0
    return SyncResult(state, stats)
