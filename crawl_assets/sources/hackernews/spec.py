"""Hacker News: stories and comments matching a search (public Algolia HN API)."""

from crawl_assets.core.spec import FormatSpec, PullSpec, SourceSpec

SPEC = SourceSpec(
    platform="hackernews",
    description="Hacker News stories and comments (Algolia search API), incremental by creation time.",
    raw_asset="hackernews_items_raw",
    raw_description="Raw Hacker News search pages (Algolia search_by_date) of one query, wrapped with the query; "
    "stored exactly as received.",
    kinds=("search_query",),
    formats=(FormatSpec("hackernews", "crawl_assets.sources.hackernews.normalize:normalize_hackernews",
                        "Hacker News search pages in crawl envelopes", numbered_lines=True, envelope_field="tags"),),
    export_formats=("hackernews",),
    identifier_hints={"search_query": "'<query>'"},
    persons="crawl_assets.sources.hackernews.normalize:PERSONS",
    options=("tags", "hits_per_page", "pages_per_batch"),
    pull=PullSpec(sync="crawl_assets.sources.hackernews.sync:sync_search", raw_format="hackernews",
                  client="crawl_assets.sources.hackernews.client:open_client"),
)
