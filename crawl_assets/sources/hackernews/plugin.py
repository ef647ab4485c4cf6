"""Hacker News: stories and comments matching a search (public Algolia HN API)."""

from crawl_assets.sources.plugin import SourcePlugin

PLUGIN = SourcePlugin(
    platform="hackernews",
    description="Hacker News stories and comments (Algolia search API), incremental by creation time.",
    kinds=("search_query",),
    formats={"hackernews": "crawl_assets.sources.hackernews.normalize:normalize_hackernews"},
    persons="crawl_assets.sources.hackernews.normalize:PERSONS",
    export_formats=("hackernews",),
    raw_asset="crawl_assets.sources.hackernews.assets:hackernews_items_raw",
    resources={"hackernews": "crawl_assets.sources.hackernews.resource:HackerNewsResource.from_env"},
    options=("tags", "hits_per_page", "pages_per_batch"),
)
