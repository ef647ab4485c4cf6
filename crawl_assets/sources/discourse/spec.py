"""Discourse: forums through the public JSON API (optional API key)."""

from collections.abc import Mapping

from crawl_assets.core.options import AtLeast, Flag, OptionalText, SourceOptions
from crawl_assets.core.catalog import FormatSpec, PullSpec, ReleaseTerms, SourceSpec, WebhookSpec
from crawl_assets.core.names import secret_variable


class DiscourseOptions(SourceOptions):
    """Options of a ``forum`` source (an empty value means the default)."""

    complete_topics: Flag(True) = True  # fetch every post of each topic a new post touches
    max_topic_posts: AtLeast(1, 2000) = 2000  # at most this many posts of one topic (0 = the default)
    pages_per_batch: AtLeast(1, 4) = 4  # /posts.json pages per raw batch (and checkpoint)
    max_parent_fetches: AtLeast(0, 200, zero_is_default=False) = 200  # reply targets fetched per sync; 0 = none
    api_username: OptionalText(r"^[\w.-]{1,60}$") = None  # the user an API key acts as (default: system)


SPEC = SourceSpec(
    platform="discourse",
    description="Discourse forums (JSON API): posts incrementally by id, topics with all their posts, "
    "categories and tags as metadata.",
    raw_asset="discourse_posts_raw",
    raw_description="Raw Discourse answers of one forum (latest-posts pages, topics with all their posts, "
    "categories), wrapped with the forum host; stored exactly as received.",
    kinds=("forum",),
    formats=(FormatSpec("discourse", "crawl_assets.sources.discourse.normalize:normalize_discourse",
                        "Discourse API answers in crawl envelopes", numbered_lines=True, envelope_field="host"),),
    export_formats=("discourse",),
    identifier_hints={"forum": "<forum URL>"},
    persons="crawl_assets.sources.discourse.normalize:PERSONS",
    options_model=DiscourseOptions,
    pull=PullSpec(sync="crawl_assets.sources.discourse.sync:sync_forum", raw_format="discourse",
                  client="crawl_assets.sources.discourse.client:open_client", secret="API_KEY"),
    credentials="crawl_assets.sources.discourse.spec:unset_credentials",
    # X-Discourse-Event-Signature: sha256=<hex HMAC-SHA256 of the body>; the body only is signed (the event id
    # header could be changed by a replayer), so a delivery is recognised by its body's hash
    webhook=WebhookSpec("x-discourse-event-signature", "sha256=", "sha256", topic_header="x-discourse-event",
                        delivery_header="x-discourse-event-id"),
    release_terms=ReleaseTerms(
        ids_only=False,
        note=(
            "Each forum sets its own content licence (often in its /tos page, e.g. CC BY-NC-SA): check the "
            "forum's terms before sharing."
        ),
    ),
)


def unset_credentials(entry, environ: Mapping[str, str]) -> list[str]:  # noqa: ANN001 - a registry SourceEntry
    """A public forum needs no key; a source naming a credential needs that credential's API key."""
    if not entry.credential:
        return []
    var = secret_variable("CRAWL_DISCOURSE_API_KEY", entry.tenant, entry.credential)
    return [] if environ.get(var) else [var]
