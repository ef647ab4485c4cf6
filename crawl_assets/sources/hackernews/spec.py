"""Hacker News: stories and comments matching a search (public Algolia HN API)."""

from crawl_assets.core.options import AtLeast, Clamped, SourceOptions, TextOr
from crawl_assets.core.catalog import FormatSpec, PullSpec, ReleaseTerms, SourceSpec


class HackerNewsOptions(SourceOptions):
    """Options of a ``search_query`` source (an empty value means the default)."""

    tags: TextOr("(story,comment)") = "(story,comment)"  # Algolia tags: story, comment, poll, ..., or an OR-group
    hits_per_page: Clamped(1, 1000, 100) = 100
    pages_per_batch: AtLeast(1, 5) = 5  # search pages per raw batch (and checkpoint)


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
    options_model=HackerNewsOptions,
    pull=PullSpec(sync="crawl_assets.sources.hackernews.sync:sync_search", raw_format="hackernews",
                  client="crawl_assets.sources.hackernews.client:open_client"),
    release_terms=ReleaseTerms(
        ids_only=False,
        note=(
            "Items from the public Hacker News API (Y Combinator); authors keep rights to their comments."
        ),
    ),
)
