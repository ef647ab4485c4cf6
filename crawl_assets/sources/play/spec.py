"""Google Play: reviews of a tenant's own apps (Developer API) and Play Console review exports."""

from datetime import timedelta

from crawl_assets.core.options import AtLeast, Clamped, OptionalText, PositiveOr, SourceOptions
from crawl_assets.core.catalog import FormatSpec, PullSpec, ReleaseTerms, SourceSpec

WINDOW_DAYS = 7.0  # reviews.list returns the reviews created or modified in about the last week


class PlayOptions(SourceOptions):
    """Options of an ``app`` source (an empty value or 0 means the default)."""

    window_days: PositiveOr(WINDOW_DAYS, 3650) = WINDOW_DAYS  # how far back reviews.list reaches
    max_results: Clamped(1, 100, 100) = 100  # reviews per page
    pages_per_batch: AtLeast(1, 5) = 5  # pages per raw batch (and checkpoint)
    translation_language: OptionalText(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$") = None  # BCP-47, e.g. en or pt-BR

    @property
    def window(self) -> timedelta:
        return timedelta(days=self.window_days)


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
    options_model=PlayOptions,
    pull=PullSpec(sync="crawl_assets.sources.play.sync:sync_app", raw_format="play", secret="SERVICE_ACCOUNT_JSON"),
    resource="crawl_assets.sources.play.resource:PlayResource.from_env",
    release_terms=ReleaseTerms(
        ids_only=False,
        note=(
            "Google Play reviews of the publisher's own apps (Play Developer API): sharing reviewers' text "
            "may need Google's and the reviewers' consent; consider --dehydrate play."
        ),
    ),
)
