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


# Source options (registry ``options``) that change how a source's raw data is normalized. An export
# ingested with them keeps them in its batch manifest (``extra["normalize"]``), so the pipeline normalizes
# it exactly as ``crawl-assets normalize`` with the same flags does.
NORMALIZE_OPTIONS = ("timezone",)
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


def normalize_options(options: Mapping[str, Any]) -> dict[str, str]:
    """The normalization options among a source's ``options``, validated (ValueError naming the option)."""
    found: dict[str, str] = {}
    if options.get("timezone") not in (None, ""):
        try:
            found["timezone"] = check_timezone(options["timezone"])
        except ValueError as exc:
            raise ValueError(f"options.timezone: {exc}") from None
    return found
