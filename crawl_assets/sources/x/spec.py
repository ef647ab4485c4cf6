"""X (Twitter): API v2 timelines and searches, API v2 recordings and account archives."""

from crawl_assets.core.spec import FormatSpec, Sample, SourceSpec

SPEC = SourceSpec(
    platform="x",
    description="X (Twitter) user timelines, recent and full-archive searches (API v2), v2 recordings and archives.",
    raw_asset="x_posts_raw",
    raw_description="Raw X posts of one source: API v2 response pages and account-archive files, "
    "stored exactly as received.",
    kinds=("account_timeline", "search_query"),
    formats=(
        FormatSpec("x-v2", "crawl_assets.sources.x.normalize:normalize_v2",
                   "X API v2 response pages (one JSON page per line)", numbered_lines=True, splittable=True,
                   sniff="crawl_assets.sources.x.normalize:sniff_v2", sniff_rank=30),
        FormatSpec("x-archive", "crawl_assets.sources.x.normalize_archive:normalize_archive",
                   "an X account archive data file (window.YTD....)",
                   sniff="crawl_assets.sources.x.normalize_archive:sniff_archive", sniff_rank=0,
                   export_owner="crawl_assets.sources.x.archive_account:archive_account_id"),
    ),
    export_formats=("x-v2", "x-archive"),
    edit_histories=True,
    identifier_hints={"account_timeline": "<account handle>", "search_query": "'<query>'"},
    persons="crawl_assets.sources.x.normalize:PERSONS",
    options=("endpoint", "max_results", "pages_per_batch", "complete_threads", "max_parent_lookups",
             "backfill_window_hours", "exclude"),
    live="crawl_assets.sources.x.collect:collect",
    resource="crawl_assets.sources.x.resource:XResource.from_env",
    samples=(Sample("sample-search", "x-v2", "x_v2_recording.jsonl"),
             Sample("sample-archive", "x-archive", "x_archive_tweets.js")),
)
