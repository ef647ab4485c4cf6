"""Telegram: channels and groups through Telethon (MTProto), and Telegram Desktop exports."""

from crawl_assets.core.spec import FormatSpec, Sample, SourceSpec

SPEC = SourceSpec(
    platform="telegram",
    description="Telegram channels and groups (Telethon) and Telegram Desktop exports (result.json).",
    raw_asset="telegram_messages_raw",
    raw_description="Raw Telegram messages of one source: Telegram Desktop exports (result.json) and "
    "live channels and groups, stored exactly as received.",
    kinds=("channel", "group"),
    formats=(
        FormatSpec("telegram", "crawl_assets.sources.telegram.normalize:normalize_telethon",
                   "Telethon messages (one Message.to_json() per line)", numbered_lines=True, splittable=True,
                   sniff="crawl_assets.sources.telegram.normalize:sniff_telethon", sniff_rank=10),
        FormatSpec("telegram-export", "crawl_assets.sources.telegram.normalize_export:normalize_export",
                   "a Telegram Desktop export (result.json)",
                   sniff="crawl_assets.sources.telegram.normalize_export:sniff_export", sniff_rank=40),
    ),
    export_formats=("telegram-export", "telegram"),
    identifier_hints={"channel": "<channel username>", "group": "<group username or id>"},
    persons="crawl_assets.sources.telegram.normalize:PERSONS",
    options=("comments", "download_media", "media_max_bytes", "takeout", "metadata_every_hours"),
    live="crawl_assets.sources.telegram.collect:collect",
    resource="crawl_assets.sources.telegram.resource:TelegramResource.from_env",
    max_runs_per_credential=1,  # an account serves one run at a time (its lock would serialize them anyway)
    samples=(Sample("sample-channel", "telegram-export", "telegram_export/result.json"),),
)
