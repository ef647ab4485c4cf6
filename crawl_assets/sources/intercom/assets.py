"""``intercom_conversations_raw``: Intercom conversations (with their parts) of one workspace per partition."""

from crawl_assets.sources.common import build_raw_asset
from crawl_assets.sources.intercom.collect import collect

intercom_conversations_raw = build_raw_asset(
    platform="intercom",
    name="intercom_conversations_raw",
    description="Raw Intercom conversations of one workspace, each as GET /conversations/{id} answered "
    "(with its parts), wrapped with the workspace id; stored exactly as received.",
    live=collect,
    live_resource_keys=frozenset({"intercom"}),
)
