"""The Intercom sync engine: conversations updated since the cursor, each fetched whole (its parts).

State (the checkpoint)::

    updated_after   cursor: every conversation updated at or before it is stored (epoch seconds)
    pass            an unfinished search: {after, starting_after, top, started}

A pass searches ``updated_at > after`` oldest first, paging with ``starting_after``, and fetches each
hit's detail (the parts). When it ends the cursor becomes ``min(top, started - overlap)``: a
conversation updated while the pass ran is searched again next time (duplicates are resolved by key),
never skipped. A first sync goes back ``history_horizon_days`` (everything when unset).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from crawl_assets.registry import SourceEntry
from crawl_assets.sources.intercom.spec import IntercomOptions
from crawl_assets.sources.intercom.client import IntercomClient
from crawl_assets.sdk.sync import Budget, StoreBatch, SyncResult, begin, require_kind
from crawl_assets.normalize.build import wrap_line
from crawl_assets.sdk.errors import PermanentError, TransientError

RAW_FORMAT = "intercom"


def _parts_count(conversation: dict[str, Any]) -> int:
    parts = (conversation.get("conversation_parts") or {}).get("conversation_parts") or []
    return len(parts) + 1  # the opening message (source) is a record too


def sync_workspace(client: IntercomClient, entry: SourceEntry, state: dict[str, Any], store: StoreBatch,
                   budget: Budget, *, clock: Callable[[], float] = time.time) -> SyncResult:
    """Store every conversation updated since the cursor; resumable at any page."""
    require_kind(entry, "workspace", "Intercom")
    options: IntercomOptions = entry.typed_options  # parsed and validated by the registry
    state, stats, buffer = begin(state, store, options.conversations_per_batch)
    if not state.get("pass"):
        after = state.get("updated_after")
        if after is None:
            horizon = entry.policy.history_horizon_days
            after = int(clock()) - horizon * 86_400 if horizon else 0
        state["pass"] = {"after": int(after), "starting_after": None, "top": int(after), "started": int(clock())}
    p = state["pass"]
    while budget.allows(client.stats, clock):
        page = client.search_updated(p["after"], per_page=options.per_page, starting_after=p["starting_after"])
        body = page.json if isinstance(page.json, dict) else {}
        conversations = body.get("conversations")
        if not isinstance(conversations, list):
            raise TransientError("intercom conversations/search: answer without a 'conversations' list",
                                 endpoint=page.endpoint)
        for hit in conversations:
            try:
                detail = client.conversation(str(hit["id"]))
            except PermanentError as exc:
                if exc.status != 404:
                    raise
                # deleted between the search and the fetch: the workspace itself is fine
                stats.extra["conversations_gone"] = stats.extra.get("conversations_gone", 0) + 1
                continue
            conv = detail.json if isinstance(detail.json, dict) else {}
            updated = int(conv.get("updated_at") or hit.get("updated_at") or 0)
            stats.fetched += _parts_count(conv)
            if int(conv.get("created_at") or 0) > p["after"]:
                stats.new += 1
            else:
                stats.updated += 1
            stats.saw(datetime.fromtimestamp(updated, timezone.utc) if updated else None)
            p["top"] = max(p["top"], updated)
            buffer.add(wrap_line(detail.body, endpoint="conversation", workspace=entry.identifier,
                                 retrieved_at=datetime.fromtimestamp(clock(), timezone.utc).isoformat()), state)
        following = ((body.get("pages") or {}).get("next") or {}).get("starting_after")
        if not following or not conversations:
            state["updated_after"] = min(p["top"], p["started"] - options.overlap_seconds)
            state.pop("pass")
            stats.complete = True
            break
        p["starting_after"] = following
    buffer.flush(state)
    stats.extra["cursor_updated_after"] = state.get("updated_after") or 0
    return SyncResult(state, stats)
