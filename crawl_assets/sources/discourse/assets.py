"""``discourse_posts_raw``: Discourse posts, topics and categories of one forum per partition."""

from crawl_assets.sources.common import build_raw_asset
from crawl_assets.sources.discourse.collect import collect

discourse_posts_raw = build_raw_asset(
    platform="discourse",
    name="discourse_posts_raw",
    description="Raw Discourse answers of one forum (latest-posts pages, topics with all their posts, "
    "categories), wrapped with the forum host; stored exactly as received.",
    live=collect,
    live_resource_keys=frozenset({"discourse"}),
)
