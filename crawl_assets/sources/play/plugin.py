"""Google Play: reviews of a tenant's own apps (Developer API) and Play Console review exports."""

from crawl_assets.sources.plugin import SourcePlugin

PLUGIN = SourcePlugin(
    platform="play",
    description="Google Play reviews (Developer API reviews.list, the last week) and Play Console CSV exports (history).",
    kinds=("app",),
    formats={
        "play": "crawl_assets.sources.play.normalize:normalize_reviews",
        "play-csv": "crawl_assets.sources.play.normalize:normalize_csv",
    },
    persons="crawl_assets.sources.play.normalize:PERSONS",
    export_formats=("play-csv", "play"),
    raw_asset="crawl_assets.sources.play.assets:play_reviews_raw",
    resources={"play": "crawl_assets.sources.play.resource:PlayResource.from_env"},
    options=("window_days", "max_results", "pages_per_batch", "translation_language"),
)
