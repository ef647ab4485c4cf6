"""``hackernews_items_raw``: Hacker News stories and comments matching one search per partition."""

from crawl_assets.sources.common import build_raw_asset
from crawl_assets.sources.hackernews.collect import collect

hackernews_items_raw = build_raw_asset(
    platform="hackernews",
    name="hackernews_items_raw",
    description="Raw Hacker News search pages (Algolia search_by_date) of one query, wrapped with the query; "
    "stored exactly as received.",
    live=collect,
    live_resource_keys=frozenset({"hackernews"}),
)
