"""Intercom: conversations of a workspace through the REST API; each part is a record."""

from crawl_assets.sources.plugin import SourcePlugin

PLUGIN = SourcePlugin(
    platform="intercom",
    description="Intercom conversations of a workspace (REST API, incremental by updated_at); parts as records.",
    kinds=("workspace",),
    formats={"intercom": "crawl_assets.sources.intercom.normalize:normalize_intercom"},
    persons="crawl_assets.sources.intercom.normalize:PERSONS",
    export_formats=("intercom",),
    raw_asset="crawl_assets.sources.intercom.assets:intercom_conversations_raw",
    resources={"intercom": "crawl_assets.sources.intercom.resource:IntercomResource.from_env"},
    options=("per_page", "conversations_per_batch", "overlap_seconds"),
)
