"""``x_posts_raw``: X (Twitter) observations of one source per partition, stored as received."""

from crawl_assets.sources.common import build_raw_asset
from crawl_assets.sources.x.collect import collect

x_posts_raw = build_raw_asset(
    platform="x",
    name="x_posts_raw",
    description="Raw X posts of one source: API v2 response pages and account-archive files, "
    "stored exactly as received.",
    live=collect,
    live_resource_keys=frozenset({"x"}),
)
