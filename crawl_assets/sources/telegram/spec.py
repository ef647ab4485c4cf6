"""Telegram: channels and groups through Telethon (MTProto), and Telegram Desktop exports."""

from crawl_assets.core.options import Flag, PositiveOr, SourceOptions
from crawl_assets.core.catalog import DiscoverySpec, FormatSpec, ReleaseTerms, Sample, SourceSpec


class TelegramOptions(SourceOptions):
    """Options of a ``channel`` or ``group`` source (an empty value or 0 means the default)."""

    comments: Flag(False) = False  # also collect the linked discussion group's threads
    download_media: Flag(False) = False  # photos and documents into the lake's media area
    media_max_bytes: PositiveOr(20 * 1024 * 1024, 1 << 40) = 20 * 1024 * 1024  # larger files are skipped
    takeout: Flag(False) = False  # read through a takeout session
    metadata_every_hours: PositiveOr(24.0, 24 * 3650) = 24.0  # how often the chat's metadata is re-read


SPEC = SourceSpec(
    platform="telegram",
    description="Telegram channels and groups (Telethon) and Telegram Desktop exports (result.json).",
    raw_asset="telegram_messages_raw",
    raw_description="Raw Telegram messages of one source: Telegram Desktop exports (result.json) and "
    "live channels and groups, stored exactly as received.",
    kinds=("channel", "group", "web_channel", "id_list"),  # web_channel: a public channel's t.me/s pages, no account
    formats=(
        FormatSpec("telegram", "crawl_assets.sources.telegram.normalize:normalize_telethon",
                   "Telethon messages (one Message.to_json() per line)", numbered_lines=True, splittable=True,
                   sniff="crawl_assets.sources.telegram.normalize:sniff_telethon", sniff_rank=10),
        FormatSpec("telegram-export", "crawl_assets.sources.telegram.normalize_export:normalize_export",
                   "a Telegram Desktop export (result.json)",
                   sniff="crawl_assets.sources.telegram.normalize_export:sniff_export", sniff_rank=40),
        FormatSpec("telegram-web", "crawl_assets.sources.telegram.normalize_web:normalize_web",
                   "a public channel's web preview pages (t.me/s) in crawl envelopes", numbered_lines=True,
                   splittable=True, envelope_field="web_channel"),
    ),
    export_formats=("telegram-export", "telegram"),
    identifier_hints={"channel": "<channel username>", "group": "<group username or id>",
                      "web_channel": "<public channel username>",
                      "id_list": "<CHANNEL:MESSAGE list under the import root, e.g. a release's ids.jsonl>"},
    persons="crawl_assets.sources.telegram.normalize:PERSONS",
    options_model=TelegramOptions,
    live="crawl_assets.sources.telegram.collect:collect",
    resource="crawl_assets.sources.telegram.resource:TelegramResource.from_env",
    credentials="crawl_assets.sources.telegram.credentials:unset_credentials",
    max_runs_per_credential=1,  # an account serves one run at a time (its lock would serialize them anyway)
    samples=(Sample("sample-channel", "telegram-export", "telegram_export/result.json"),),
    release_terms=ReleaseTerms(
        ids_only=False,
        note=(
            "Messages of public channels and groups as Telegram served them; Telegram's API terms apply to "
            "re-collection; private chats need their members' consent."
        ),
    ),
    discovery=DiscoverySpec(references="crawl_assets.sources.telegram.discovery:references",
                            registered="crawl_assets.sources.telegram.discovery:candidate_of",
                            identifier="crawl_assets.sources.telegram.discovery:identifier_of",
                            kinds=("web_channel", "channel", "group")),
)
