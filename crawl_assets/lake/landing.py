"""The lake's landing area: pushed events (webhooks) stored as raw observations, one file each.

    landing/{tenant}/{platform}/{source}/{YYYYMMDD}/{event_id}.json

Each file is one envelope line (``crawl_assets.normalize.build.wrap_line``): the request body exactly
as received, plus when it arrived and the event's topic and delivery id. Event ids sort by arrival
time, so a reader (the webhook sensor) keeps one cursor — the last id it handled — and lists only the
days from the cursor's day on. Writes are atomic and never overwrite (a new id per request).

    landing/{tenant}/{platform}/{source}/_deliveries/{key}    one empty marker per delivery landed

A marker is claimed (created exclusively) before a delivery lands, so a replayed or retried delivery is
recognised and landed once (``claim_delivery``).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import orjson

from crawl_assets.lake.layout import LANDING, source_dir
from crawl_assets.lake.store import Lake
from crawl_assets.normalize.build import wrap_line
from crawl_assets.core.private import FILE_MODE, make_dirs

AREA = LANDING
_DELIVERIES = "_deliveries"


@dataclass(frozen=True)
class LandedEvent:
    tenant: str
    platform: str
    source: str
    event_id: str
    path: str  # relative to the lake root

    @property
    def day(self) -> str:
        return self.event_id[:8]


def landing_events(tenant: str, platform: str = "*", source: str = "*") -> str:
    """The pattern of the landed events of a tenant (of one source when given), relative to the lake root."""
    return f"{source_dir(AREA, tenant, platform, source)}/*/*.json"


def landing_deliveries(tenant: str) -> str:
    """The pattern of a tenant's delivery markers."""
    return f"{source_dir(AREA, tenant, '*', '*')}/{_DELIVERIES}/*"


def new_event_id(now: datetime | None = None) -> str:
    """``YYYYMMDDTHHMMSSffffffZ-<random>``: sorts by arrival, unique across concurrent receivers."""
    now = now or datetime.now(timezone.utc)
    return f"{now.strftime('%Y%m%dT%H%M%S%f')}Z-{uuid.uuid4().hex[:10]}"


def land_event(lake: Lake, *, tenant: str, platform: str, source: str, body: bytes, topic: str = "",
               delivery: str = "", received_at: datetime | None = None) -> LandedEvent:
    """Store one accepted push event; returns where it is. ``body`` must be JSON (checked by the caller)."""
    received_at = received_at or datetime.now(timezone.utc)
    event_id = new_event_id(received_at)
    rel = f"{source_dir(AREA, tenant, platform, source)}/{event_id[:8]}/{event_id}.json"
    line = wrap_line(body, endpoint="webhook", topic=topic, delivery=delivery, received_at=received_at.isoformat())
    lake.write_bytes(rel, line + b"\n", overwrite=False)
    return LandedEvent(tenant, platform, source, event_id, rel)


def landed_events(lake: Lake, *, after: str = "", limit: int = 10_000,
                  today: datetime | None = None) -> list[LandedEvent]:
    """Events with an id greater than ``after`` (all tenants), oldest first, at most ``limit``."""
    start = datetime.strptime(after[:8], "%Y%m%d").replace(tzinfo=timezone.utc) if after else None
    end = today or datetime.now(timezone.utc)
    if start is None:
        days = ["*"]
    else:
        days = [(start + timedelta(days=n)).strftime("%Y%m%d") for n in range((end - start).days + 2)]
    found: list[LandedEvent] = []
    for day in days:
        for rel in lake.glob(f"{AREA}/*/*/*/{day}/*.json"):
            _, tenant, platform, source, _, name = rel.split("/")
            event_id = name.removesuffix(".json")
            if event_id > after:
                found.append(LandedEvent(tenant, platform, source, event_id, rel))
    found.sort(key=lambda e: e.event_id)
    return found[:limit]


def read_event(lake: Lake, event: LandedEvent) -> dict[str, object]:
    """The stored envelope of one event (``crawl`` + ``response``)."""
    with lake.open_read(event.path) as fh:
        return orjson.loads(fh.read())


def _marker(tenant: str, platform: str, source: str, key: str) -> str:
    return f"{source_dir(AREA, tenant, platform, source)}/{_DELIVERIES}/{key}"


def claim_delivery(lake: Lake, *, tenant: str, platform: str, source: str, key: str) -> bool:
    """Mark delivery ``key`` (hex) of a source as landed; False when it already was (a replay or a retry)."""
    rel = _marker(tenant, platform, source, key)
    if getattr(lake.fs, "protocol", None) in ("file", ("file", "local")) or "Local" in type(lake.fs).__name__:
        path = lake.path(rel)
        make_dirs(os.path.dirname(path))
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE))
        except FileExistsError:
            return False
        return True
    try:  # on S3 a conditional PUT (If-None-Match): of two receivers claiming at once, one wins
        lake.fs.pipe_file(lake.path(rel), b"", mode="create")
    except FileExistsError:
        return False
    return True


def release_delivery(lake: Lake, *, tenant: str, platform: str, source: str, key: str) -> None:
    """Undo a claim whose landing failed, so the platform's retry lands it."""
    lake.remove(_marker(tenant, platform, source, key))
