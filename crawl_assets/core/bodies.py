"""Request bodies read no further than a cap, whoever sends them (the API's release requests, webhooks)."""

from __future__ import annotations

from collections.abc import AsyncIterable


async def read_capped(chunks: AsyncIterable[bytes], cap: int) -> bytes | None:
    """The body's bytes, or None as soon as it grows past ``cap`` bytes (the rest is never read)."""
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > cap:
            return None
        parts.append(chunk)
    return b"".join(parts)
