"""``HackerNewsResource``: the public Algolia HN API needs no credential; base URL and retries only.

Environment: ``CRAWL_HACKERNEWS_BASE_URL`` (another host, or the stand-in in tests).
"""

from __future__ import annotations

from typing import ClassVar

from crawl_assets.registry import SourceEntry
from crawl_assets.sources.hackernews.client import DEFAULT_BASE_URL, HackerNewsClient, new_client
from crawl_assets.sources.rest_resource import RestSourceResource


class HackerNewsResource(RestSourceResource):
    """Hacker News search access for ``hackernews_items_raw``."""

    ENV: ClassVar[str] = "CRAWL_HACKERNEWS"
    SECRET: ClassVar[str] = "API_KEY"
    DEFAULT_BASE_URL: ClassVar[str] = DEFAULT_BASE_URL

    def client(self, entry: SourceEntry) -> HackerNewsClient:
        return new_client(self.root_url(), self.retry_settings(), timeout_seconds=self.timeout_seconds)
