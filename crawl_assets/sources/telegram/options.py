"""What one Telegram sync may spend (``Budget``) and the per-source switches of a registry entry (``Options``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crawl_assets.registry import SourceEntry

PAGE = 100  # Telegram returns at most 100 messages per history request


@dataclass(frozen=True)
class Budget:
    """What one run may spend on a source; the rest waits for the next run."""

    max_pages: int = 200
    max_messages: int = 20_000
    pages_per_batch: int = 5

    @property
    def batch_size(self) -> int:
        return max(1, self.pages_per_batch) * PAGE


def _flag(value: Any) -> bool:
    """A registry option as a boolean (YAML booleans, or 'true'/'yes'/'1' typed by hand)."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


@dataclass(frozen=True)
class Options:
    """Per-source switches from the registry's ``options``."""

    comments: bool = False
    download_media: bool = False
    media_max_bytes: int = 20 * 1024 * 1024
    takeout: bool = False
    metadata_every_hours: float = 24.0

    @classmethod
    def from_entry(cls, entry: SourceEntry) -> "Options":
        o = entry.options
        return cls(
            comments=_flag(o.get("comments")),
            download_media=_flag(o.get("download_media")),
            media_max_bytes=int(o.get("media_max_bytes") or cls.media_max_bytes),
            takeout=_flag(o.get("takeout")),
            metadata_every_hours=float(o.get("metadata_every_hours") or cls.metadata_every_hours),
        )
