"""Lake layout: where each kind of data lives under one root. Pure path arithmetic, no I/O.

    raw/{tenant}/{platform}/{source}/{batch}.jsonl.gz     observations exactly as received
    raw/{tenant}/{platform}/{source}/{batch}.meta.json    manifest; written last = batch committed
    tables/{table}/{tenant}/{platform}/{source}/{batch}.parquet   derived, one part per raw batch
    quarantine/{tenant}/{platform}/{source}/{batch}.jsonl rejected input with the reason
    deadletter/{tenant}/...                               index writes that failed, replayable
    index_state/{tenant}/{platform}/{source}/{batch}.done  a normalized part the index has accounted for
    state/{tenant}/{platform}/{source}/...                collectors' per-item state too big for a cursor
                                                          (X thread lookups, Telegram refresh fingerprints)
    media/{tenant}/{platform}/{source}/...                media files, only for sources that opt in

Raw data, derived tables and model-made features never share a folder, so everything derived can
be deleted and rebuilt from ``raw/`` without collecting again.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

BATCH_ID = re.compile(r"^\d{8}T\d{12}Z-[0-9a-z]{1,12}-\d{4}(-e[0-9a-f]{8}b?)*$")  # suffix: rewritten by an erasure


INDEX_STATE = "index_state"
STATE = "state"
MEDIA = "media"


def source_dir(area: str, tenant: str, platform: str, source: str) -> str:
    return f"{area}/{tenant}/{platform}/{source}"


def index_marker(tenant: str, platform: str, source: str, batch_id: str) -> str:
    """The marker saying the index has accounted for one normalized part."""
    return f"{source_dir(INDEX_STATE, tenant, platform, source)}/{batch_id}.done"


def state_file(tenant: str, platform: str, source: str, name: str) -> str:
    """A collector's per-item state of one source (too big for its cursor)."""
    return f"{source_dir(STATE, tenant, platform, source)}/{name}"


def media_file(tenant: str, platform: str, source: str, name: str) -> str:
    """A downloaded media file of one source (opt-in)."""
    return f"{source_dir(MEDIA, tenant, platform, source)}/{name}"


def table_dir(table: str, tenant: str, platform: str, source: str) -> str:
    return f"tables/{table}/{tenant}/{platform}/{source}"


def new_batch_id(run_id: str | None, seq: int, now: datetime | None = None) -> str:
    """Sortable by time; unique per run and sequence number, so concurrent writers never collide."""
    now = now or datetime.now(timezone.utc)
    run = re.sub(r"[^0-9a-z]", "", (run_id or "local").lower())[:8] or "local"
    return f"{now.strftime('%Y%m%dT%H%M%S%f')}Z-{run}-{seq:04d}"
