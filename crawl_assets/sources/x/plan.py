"""What an X source's kind and options (``spec.XOptions``, validated by the registry) mean for one sync:
the API endpoint, a page size within that endpoint's limits, the backfill window."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from crawl_assets.registry import SourceEntry, SourceKind
from crawl_assets.sources.x.client import SEARCH_ALL, SEARCH_RECENT, USER_TWEETS
from crawl_assets.sources.x.spec import XOptions

PAGE_LIMITS = {USER_TWEETS: (5, 100), SEARCH_RECENT: (10, 100), SEARCH_ALL: (10, 500)}


@dataclass(frozen=True)
class SyncPlan:
    """One X source's sync settings: its options resolved for its kind."""

    endpoint: str
    page_size: int
    pages_per_batch: int
    complete_threads: bool
    max_parent_lookups: int
    window: timedelta
    exclude: str | None

    @classmethod
    def of(cls, entry: SourceEntry) -> "SyncPlan":
        """``ValueError`` for a kind that is not collected live."""
        if entry.kind not in (SourceKind.account_timeline, SourceKind.search_query):
            raise ValueError(f"source {entry.key}: X sources of kind {entry.kind.value!r} are not collected live "
                             "(use account_timeline, search_query or export_file)")
        options: XOptions = entry.typed_options  # parsed and validated by the registry
        if entry.kind is SourceKind.account_timeline:
            endpoint = USER_TWEETS
        else:
            endpoint = SEARCH_ALL if options.endpoint == "all" else SEARCH_RECENT
        low, high = PAGE_LIMITS[endpoint]
        default_window = 24 * 30 if endpoint == SEARCH_ALL else 24
        return cls(
            endpoint=endpoint,
            page_size=max(low, min(high, options.max_results or high)),
            pages_per_batch=options.pages_per_batch,
            complete_threads=options.complete_threads,
            max_parent_lookups=options.max_parent_lookups,
            window=timedelta(hours=options.backfill_window_hours or default_window),
            exclude=options.exclude,
        )
