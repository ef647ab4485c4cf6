"""Telegram: channels and groups through Telethon (MTProto), and Telegram Desktop exports."""

from crawl_assets.sources.plugin import SourcePlugin

PLUGIN = SourcePlugin(
    platform="telegram",
    description="Telegram channels and groups (Telethon) and Telegram Desktop exports (result.json).",
    kinds=("channel", "group"),
    formats={
        "telegram": "crawl_assets.sources.telegram.normalize:normalize_telethon",
        "telegram-export": "crawl_assets.sources.telegram.normalize_export:normalize_export",
    },
    persons="crawl_assets.sources.telegram.normalize:PERSONS",
    export_formats=("telegram-export", "telegram"),
    raw_asset="crawl_assets.sources.telegram.assets:telegram_messages_raw",
    resources={"telegram": "crawl_assets.sources.telegram.resource:TelegramResource.from_env"},
    options=("comments", "download_media", "media_max_bytes", "takeout", "metadata_every_hours"),
)
