"""The releases made of a tenant's records that hold a subject (a person ``platform:id`` or a source key): each
release's lake entry keeps the keyed digests of the people and sources it holds (``crawl_assets.release``), so
an erasure can name the releases made before it, for their owner to withdraw."""

from __future__ import annotations

from typing import Any

import orjson

from crawl_assets.erasure.log import subject_digest
from crawl_assets.lake import Lake
from crawl_assets.lake.layout import releases_dir

MAX_ENTRY = 64 << 20


def releases_holding(lake: Lake, tenant: str, subject: str, key: bytes) -> list[dict[str, Any]]:
    """(release id, creation time, folder) of each release of ``tenant`` that holds ``subject``, oldest first."""
    wanted = subject_digest(tenant, subject, key)["hmac_sha256"]
    found = []
    for rel in lake.glob(f"{releases_dir(tenant)}/*.json"):
        entry = orjson.loads(lake.read_bytes(rel, MAX_ENTRY) or b"{}")
        if wanted in set(entry.get("subjects") or ()):
            found.append({k: entry.get(k) for k in ("release_id", "created_at", "path")})
    return sorted(found, key=lambda e: str(e["created_at"]))
