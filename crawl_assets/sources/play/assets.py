"""``play_reviews_raw``: Google Play reviews of one app per partition (API pages or Console CSV exports)."""

from crawl_assets.sources.common import build_raw_asset
from crawl_assets.sources.play.collect import collect

play_reviews_raw = build_raw_asset(
    platform="play",
    name="play_reviews_raw",
    description="Raw Google Play reviews of one app: reviews.list pages wrapped with the package name, or "
    "Play Console review export CSV files; stored exactly as received.",
    live=collect,
    live_resource_keys=frozenset({"play"}),
)
