"""Discourse: forums through the public JSON API (optional API key)."""

from crawl_assets.sources.plugin import SourcePlugin

PLUGIN = SourcePlugin(
    platform="discourse",
    description="Discourse forums (JSON API): posts incrementally by id, topics with all their posts, "
    "categories and tags as metadata.",
    kinds=("forum",),
    formats={"discourse": "crawl_assets.sources.discourse.normalize:normalize_discourse"},
    persons="crawl_assets.sources.discourse.normalize:PERSONS",
    export_formats=("discourse",),
    raw_asset="crawl_assets.sources.discourse.assets:discourse_posts_raw",
    resources={"discourse": "crawl_assets.sources.discourse.resource:DiscourseResource.from_env"},
    options=("complete_topics", "max_topic_posts", "pages_per_batch", "max_parent_fetches", "api_username"),
)
