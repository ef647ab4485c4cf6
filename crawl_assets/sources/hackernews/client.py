"""The Hacker News search client (Algolia's public HN API): newest items first, by time window.

Algolia caps a query at 1,000 hits (``nbPages`` × ``hitsPerPage``); the sync walks deeper by narrowing
``numericFilters=created_at_i<=...``. No key, no budget headers: a 429 is waited out (``Retry-After``).
"""

from __future__ import annotations

from typing import Any

from crawl_assets.sdk.http import HttpClient, Page, RateHeaders, RetrySettings, new_http_client

DEFAULT_BASE_URL = "https://hn.algolia.com"
SEARCH = "search_by_date"


class HackerNewsClient(HttpClient):
    """Public Algolia HN search."""

    def search_by_date(self, query: str, *, tags: str, after: int, at_most: int | None, page: int,
                       hits_per_page: int) -> Page:
        """Items with ``after < created_at_i`` (``<= at_most`` when given), newest first, one page."""
        filters = [f"created_at_i>{after}"] + ([f"created_at_i<={at_most}"] if at_most is not None else [])
        params = {"query": query, "tags": tags, "numericFilters": ",".join(filters), "page": page,
                  "hitsPerPage": hits_per_page}
        return self.get(SEARCH, "/api/v1/search_by_date", params)


def new_client(base_url: str, settings: RetrySettings, *, timeout_seconds: float = 30.0) -> HackerNewsClient:
    return HackerNewsClient(new_http_client(base_url, timeout_seconds=timeout_seconds), api="hackernews",
                            settings=settings, rate=RateHeaders())


def open_client(resource: Any, entry: Any) -> HackerNewsClient:
    """The client of one sync (``PullSpec.client``): the public API needs no credential.

    ``resource`` is the shared REST resource: ``CRAWL_HACKERNEWS_BASE_URL`` (another host, or the stand-in
    in tests), retries and timeout."""
    return new_client(resource.base_url or DEFAULT_BASE_URL, resource.retry_settings(),
                      timeout_seconds=resource.timeout_seconds)
