"""The X-specific options of a registry entry (``options:``), read once per sync."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from crawl_assets.registry import SourceEntry, SourceKind
from crawl_assets.sources.x.client import SEARCH_ALL, SEARCH_RECENT, USER_TWEETS

PAGE_LIMITS = {USER_TWEETS: (5, 100), SEARCH_RECENT: (10, 100), SEARCH_ALL: (10, 500)}


@dataclass(frozen=True)
class SourceOptions:
    """The X-specific options of a registry entry (``options:``), validated once."""

    endpoint: str
    page_size: int
    pages_per_batch: int
    complete_threads: bool
    max_parent_lookups: int
    window: timedelta
    exclude: str | None

    @classmethod
    def of(cls, entry: SourceEntry) -> "SourceOptions":
        o = entry.options
        if entry.kind is SourceKind.account_timeline:
            endpoint = USER_TWEETS
        elif entry.kind is SourceKind.search_query:
            choice = str(o.get("endpoint") or "recent")
            if choice not in ("recent", "all"):
                raise ValueError(f"source {entry.key}: options.endpoint must be 'recent' or 'all', not {choice!r}")
            endpoint = SEARCH_ALL if choice == "all" else SEARCH_RECENT
        else:
            raise ValueError(f"source {entry.key}: X sources of kind {entry.kind.value!r} are not collected live "
                             "(use account_timeline, search_query or export_file)")
        low, high = PAGE_LIMITS[endpoint]
        default_window = 24 * 30 if endpoint == SEARCH_ALL else 24
        return cls(
            endpoint=endpoint,
            page_size=max(low, min(high, int(o.get("max_results") or high))),
            pages_per_batch=max(1, int(o.get("pages_per_batch") or 5)),
            complete_threads=bool(o.get("complete_threads") or False),
            max_parent_lookups=max(0, int(o.get("max_parent_lookups") or 500)),
            window=timedelta(hours=max(1, int(o.get("backfill_window_hours") or default_window))),
            exclude=str(o["exclude"]) if o.get("exclude") else None,
        )
