"""Normalized records of our own making for the enrichment tests, as the lake stores them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pyarrow as pa

from crawl_assets.pipeline.version import NORMALIZER_VERSION
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import records_to_arrow
from crawl_assets.normalize.text import clean_text

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def iso(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


def record(key: str, text: str = "", *, tenant: str = "acme", platform: str = "x", source: str | None = None,
           author: str | None = "u1", at: datetime | None = None, kind: str = "post", **extra: Any) -> dict[str, Any]:
    """A normalized record as a dict (``text_clean`` from ``text`` by the normalizer's own rules)."""
    at = at or T0
    return {"key": key, "platform": platform, "tenant": tenant, "source": source or f"{tenant}.{platform}.main",
            "kind": kind, "native_id": key.rsplit(":", 1)[-1], "author_id": author, "created_at": iso(at),
            "text": text, "text_clean": clean_text(text), "hashtags": extra.pop("hashtags", []),
            "provenance": {"collected_at": iso(at + timedelta(hours=1)), "method": "api"}, **extra}


def table(rows: list[dict[str, Any]]) -> pa.Table:
    return records_to_arrow(rows)


def write_part(lake: Lake, rows: list[dict[str, Any]], batch_id: str, *, tenant: str = "acme", platform: str = "x",
               source: str | None = None, version: str = NORMALIZER_VERSION) -> str:
    """Store ``rows`` as the normalized part of ``batch_id`` (as ``normalized_records`` would)."""
    part = lake.table_part("normalized_records", tenant, platform, source or f"{tenant}.{platform}.main", batch_id)
    lake.write_part(part, records_to_arrow(rows), version=version)
    return part


def batch_id(n: int) -> str:
    return f"20260301T0000{n:02d}000000Z-test-{n:04d}"
