"""What a normalizer needs to know about the batch it reads (not in the raw data itself)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


@dataclass(frozen=True)
class NormalizeContext:
    """Who the records belong to and where the raw batch came from (becomes ``provenance``)."""

    tenant: str = "default"
    source: str = "cli"
    collected_at: datetime | None = None
    method: str = "export"
    run_id: str | None = None
    raw_pointer: str | None = None
    first_line: int = 1  # line number of the stream's first line, when it is a chunk of a larger file
    # The source's own settings a normalizer may need (registry options, or the CLI's flags):
    timezone: str | None = None  # IANA name of an export's local time (Telegram Desktop exports without unix times)
    languages: tuple[str, ...] | None = None  # ISO 639-1 codes the source's texts are in (narrows detection)
    account_id: str | None = None  # the X account an account archive belongs to (its tweets' author_id)
    # What the collector knew when it stored a live batch (its manifest's ``extra.normalize``): the titles of the
    # Telegram forum topics the batch's messages are in, ``{"<chat id>:<topic id>": title}``
    topics: Mapping[str, str] | None = None
    # False: ``text_clean`` and a missing ``lang`` are left empty, for a pass that only counts records and reads
    # their keys and times (``sources.export_file.stats``): cleaning and language detection are most of a Telegram read
    text_fields: bool = True
    # The longest line read of a line-based input (None: ``CRAWL_MAX_LINE_BYTES``; ``reading.line_cap``): a longer
    # line is skipped unread and rejected with the reason
    max_line_bytes: int | None = None


# Source options (registry ``options``) that change how a source's raw data is normalized. An export
# ingested with them keeps them in its batch manifest (``extra["normalize"]``), so the pipeline normalizes
# it exactly as ``crawl-assets normalize`` with the same flags does.
NORMALIZE_OPTIONS = ("timezone", "languages", "account_id")
ACCOUNT_ID = re.compile(r"[0-9]{1,20}")
_ZONE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]*(?:/[A-Za-z0-9_+\-]+){0,2}")


def check_timezone(name: str) -> str:
    """``name`` when it is a known IANA time zone (``Asia/Tehran``), else ValueError saying what is expected."""
    if isinstance(name, str) and _ZONE_NAME.fullmatch(name):
        try:
            ZoneInfo(name)
            return name
        except (ZoneInfoNotFoundError, ValueError):
            pass
    raise ValueError(f"unknown time zone {str(name)[:60]!r}: expected an IANA name such as Asia/Tehran or Europe/Berlin")


def normalize_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The normalization options among a source's ``options``, validated (ValueError naming the option)."""
    found: dict[str, Any] = {}
    if options.get("timezone") not in (None, ""):
        try:
            found["timezone"] = check_timezone(options["timezone"])
        except ValueError as exc:
            raise ValueError(f"options.timezone: {exc}") from None
    if options.get("languages") not in (None, ""):
        found["languages"] = check_languages(options["languages"])
    if options.get("account_id") not in (None, ""):
        if not ACCOUNT_ID.fullmatch(str(options["account_id"])):
            raise ValueError(f"options.account_id: {str(options['account_id'])[:40]!r} is not a numeric X account id")
        found["account_id"] = str(options["account_id"])
    return found


def check_languages(value: Any) -> tuple[str, ...]:
    """A comma-separated list (or list) of ISO 639-1 codes, e.g. ``fa,en``; ValueError naming a bad one."""
    from crawl_assets.normalize.lang import ISO_639_1

    codes = value.split(",") if isinstance(value, str) else value if isinstance(value, (list, tuple)) else [value]
    cleaned = tuple(dict.fromkeys(str(c).strip().lower() for c in codes if str(c).strip()))
    bad = [c for c in cleaned if c not in ISO_639_1]
    if bad or not cleaned:
        raise ValueError(f"options.languages: {', '.join(bad) or 'empty'} is not an ISO 639-1 code list such as fa,en")
    return cleaned
