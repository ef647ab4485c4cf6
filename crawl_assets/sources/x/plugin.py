"""X (Twitter): API v2 timelines and searches, API v2 recordings and account archives."""

from crawl_assets.sources.plugin import SourcePlugin

PLUGIN = SourcePlugin(
    platform="x",
    description="X (Twitter) user timelines, recent and full-archive searches (API v2), v2 recordings and archives.",
    kinds=("account_timeline", "search_query"),
    formats={
        "x-v2": "crawl_assets.sources.x.normalize:normalize_v2",
        "x-archive": "crawl_assets.sources.x.normalize_archive:normalize_archive",
    },
    persons="crawl_assets.sources.x.normalize:PERSONS",
    export_formats=("x-v2", "x-archive"),
    raw_asset="crawl_assets.sources.x.assets:x_posts_raw",
    resources={"x": "crawl_assets.sources.x.resource:XResource.from_env"},
    options=(
        "endpoint", "max_results", "pages_per_batch", "complete_threads", "max_parent_lookups",
        "backfill_window_hours", "exclude",
    ),
)
