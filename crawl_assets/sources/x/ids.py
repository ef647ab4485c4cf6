"""Post ids and times: X ids are snowflakes, so an id tells when its post was made."""

from __future__ import annotations

from datetime import datetime, timezone

TWITTER_EPOCH_MS = 1288834974657


def id_time(post_id: str | int) -> datetime:
    """Creation time encoded in a snowflake id (exact to the millisecond)."""
    return datetime.fromtimestamp(((int(post_id) >> 22) + TWITTER_EPOCH_MS) / 1000, timezone.utc)


def rfc3339(when: datetime) -> str:
    """The timestamp form X accepts in ``start_time``/``end_time`` (UTC, whole seconds)."""
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def max_id(a: str | None, b: str | None) -> str | None:
    """The newer of two ids (numeric comparison; ids are decimal strings of different lengths)."""
    if a is None:
        return b
    if b is None:
        return a
    return a if int(a) >= int(b) else b
