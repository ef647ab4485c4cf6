"""X (Twitter): API v2 timelines and searches, API v2 recordings and account archives."""

from collections.abc import Mapping

from crawl_assets.core.options import AtLeast, Flag, OneOf, OptionalText, SourceOptions
from crawl_assets.core.catalog import FormatSpec, ReleaseTerms, Sample, SourceSpec
from crawl_assets.core.names import secret_variable

TOKEN_BASE = "CRAWL_X_BEARER_TOKEN"  # the app-only bearer token, per tenant and credential name


class XOptions(SourceOptions):
    """Options of an ``account_timeline`` or ``search_query`` source (an empty value or 0 means the default).
    What they mean for one sync of a kind (the API endpoint, its page limits) is ``plan.SyncPlan``."""

    endpoint: OneOf("recent", "all", default="recent") = "recent"  # search sources: recent or full-archive search
    max_results: AtLeast(1, None) = None  # page size, brought into the endpoint's limits; None: its maximum
    pages_per_batch: AtLeast(1, 5) = 5  # pages per raw batch (and checkpoint)
    complete_threads: Flag(False) = False  # look up missing parents of replies and quotes
    max_parent_lookups: AtLeast(0, 500) = 500  # parent ids looked up per sync
    backfill_window_hours: AtLeast(1, None) = None  # one backfill window of a search; None: the endpoint's default
    exclude: OptionalText(r"^(retweets|replies)(,(retweets|replies))?$") = None  # timelines: X's exclude parameter


SPEC = SourceSpec(
    platform="x",
    description="X (Twitter) user timelines, recent and full-archive searches, id lists hydrated (API v2), "
    "v2 recordings and archives.",
    raw_asset="x_posts_raw",
    raw_description="Raw X posts of one source: API v2 response pages and account-archive files, "
    "stored exactly as received.",
    kinds=("account_timeline", "search_query", "id_list"),
    formats=(
        FormatSpec("x-v2", "crawl_assets.sources.x.normalize:normalize_v2",
                   "X API v2 response pages (one JSON page per line)", numbered_lines=True, splittable=True,
                   sniff="crawl_assets.sources.x.normalize:sniff_v2", sniff_rank=30),
        FormatSpec("x-archive", "crawl_assets.sources.x.normalize_archive:normalize_archive",
                   "an X account archive data file (window.YTD....)",
                   sniff="crawl_assets.sources.x.normalize_archive:sniff_archive", sniff_rank=0,
                   export_owner="crawl_assets.sources.x.archive_account:archive_account_id",
                   owner_beside="crawl_assets.sources.x.archive_account:archive_account_beside"),
    ),
    export_formats=("x-v2", "x-archive"),
    edit_histories=True,
    snowflake_author_ids=True,
    identifier_hints={"account_timeline": "<account handle>", "search_query": "'<query>'",
                      "id_list": "<id list under the import root, e.g. a release's ids.jsonl>"},
    persons="crawl_assets.sources.x.normalize:PERSONS",
    options_model=XOptions,
    live="crawl_assets.sources.x.collect:collect",
    resource="crawl_assets.sources.x.resource:XResource.from_env",
    credentials="crawl_assets.sources.x.spec:unset_credentials",
    samples=(Sample("sample-search", "x-v2", "x_v2_recording.jsonl"),
             Sample("sample-archive", "x-archive", "x_archive_tweets.js")),
    release_terms=ReleaseTerms(
        ids_only=True,
        note=(
            "X's developer terms allow sharing post ids (and user ids), not post content: the release carries "
            "ids only; recipients hydrate them through the API under their own agreement, so deleted and "
            "protected posts stay gone."
        ),
    ),
)


def unset_credentials(entry, environ: Mapping[str, str]) -> list[str]:  # noqa: ANN001 - a registry SourceEntry
    """The bearer token variable of the entry's tenant and credential, when it is not set."""
    var = secret_variable(TOKEN_BASE, entry.tenant, entry.credential)
    return [] if environ.get(var) else [var]
