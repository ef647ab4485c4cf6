"""``telegram_messages_raw``: Telegram observations of one source per partition, stored as received."""

from crawl_assets.sources.common import build_raw_asset
from crawl_assets.sources.telegram.collect import collect

telegram_messages_raw = build_raw_asset(
    platform="telegram",
    name="telegram_messages_raw",
    description="Raw Telegram messages of one source: Telegram Desktop exports (result.json) and "
    "live channels and groups, stored exactly as received.",
    live=collect,
    live_resource_keys=frozenset({"telegram"}),
)
