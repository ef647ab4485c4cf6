"""Discourse: forums through the public JSON API (optional API key)."""

from crawl_assets.core.spec import FormatSpec, PullSpec, SourceSpec, WebhookSpec

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
    options=("complete_topics", "max_topic_posts", "pages_per_batch", "max_parent_fetches", "api_username"),
    pull=PullSpec(sync="crawl_assets.sources.discourse.sync:sync_forum", raw_format="discourse",
                  client="crawl_assets.sources.discourse.client:open_client", secret="API_KEY"),
    # X-Discourse-Event-Signature: sha256=<hex HMAC-SHA256 of the body>; the body only is signed (the event id
    # header could be changed by a replayer), so a delivery is recognised by its body's hash
    webhook=WebhookSpec("x-discourse-event-signature", "sha256=", "sha256", topic_header="x-discourse-event",
                        delivery_header="x-discourse-event-id"),
)
