"""Google Play: reviews of a tenant's own apps (Developer API) and Play Console review exports."""

from crawl_assets.core.spec import FormatSpec, PullSpec, SourceSpec

SPEC = SourceSpec(
    platform="play",
    description="Google Play reviews (Developer API reviews.list, the last week) and Play Console CSV exports (history).",
    raw_asset="play_reviews_raw",
    raw_description="Raw Google Play reviews of one app: reviews.list pages wrapped with the package name, or "
    "Play Console review export CSV files; stored exactly as received.",
    kinds=("app",),
    formats=(
        FormatSpec("play", "crawl_assets.sources.play.normalize:normalize_reviews",
                   "Google Play reviews.list pages in crawl envelopes", numbered_lines=True, envelope_field="package"),
        FormatSpec("play-csv", "crawl_assets.sources.play.normalize:normalize_csv",
                   "a Google Play Console review export (CSV)",
                   sniff="crawl_assets.sources.play.normalize:sniff_csv", sniff_rank=0),
    ),
    export_formats=("play-csv", "play"),
    identifier_hints={"app": "<package name>"},
    persons="crawl_assets.sources.play.normalize:PERSONS",
    options=("window_days", "max_results", "pages_per_batch", "translation_language"),
    pull=PullSpec(sync="crawl_assets.sources.play.sync:sync_app", raw_format="play"),
    resource="crawl_assets.sources.play.resource:PlayResource.from_env",
)
