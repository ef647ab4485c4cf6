"""What an export-file sync stored, counted in records like a live sync's (``records_fetched``, ``records_new``,
``records_updated``, ``records_deleted``, ``newest_event_lag_seconds``).

The raw step stores an export as received, in one batch. To count it, the stored batch is read once more
through its format's normalizer without pydantic validation (``normalize_documents``, the fast path) and
without cleaning texts or detecting languages (``NormalizeContext.text_fields``),
and its keys are compared with the source's earlier normalized parts (key and ``edited_at`` columns
only): *new* = a key no earlier part holds; *updated* = a key held before with another ``edited_at``;
*deleted* = a deletion marker. An unchanged export stores nothing and counts zero.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from crawl_assets.lake import Lake, RawBatch
from crawl_assets.normalize import NormalizeContext
from crawl_assets.normalize.formats import normalize_documents

RECORDS_TABLE = "normalized_records"  # the table ``crawl_assets.orchestration.assets.normalized_records`` writes


def _instant(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, str) and value:
        return _instant(datetime.fromisoformat(value.replace("Z", "+00:00")))
    return None


def export_record_stats(lake: Lake, batch: RawBatch, now: datetime | None = None) -> dict[str, Any]:
    """Record counts and the newest record's age for one stored export batch."""
    m = batch.manifest
    context = NormalizeContext(tenant=m.tenant, source=m.source, method=m.method, run_id=m.run_id,
                               raw_pointer=batch.path, text_fields=False,  # keys and times are all it reads
                               **m.extra.get("normalize", {}))  # as normalize_batch reads it
    edited: dict[str, datetime | None] = {}  # key -> edited_at of its latest observation in the export
    fetched = deleted = 0
    newest: datetime | None = None
    with lake.open_raw(batch) as stream:
        for doc in normalize_documents(m.format, stream, name=batch.path, context=context):
            if not isinstance(doc, dict):
                continue  # a rejection: normalized_records quarantines it with its reason
            fetched += 1
            if doc.get("deleted"):
                deleted += 1
                continue
            edited[doc["key"]] = _instant(doc.get("edited_at"))
            created = _instant(doc.get("created_at"))
            if created and (newest is None or created > newest):
                newest = created
    known: dict[str, datetime | None] = {}
    earlier = {p for p in lake.part_ids(RECORDS_TABLE, m.tenant, m.platform, m.source) if p < m.batch_id}
    for _, table in lake.read_parts(RECORDS_TABLE, m.tenant, m.platform, m.source, columns=["key", "edited_at"],
                                    include=earlier.__contains__):
        for key, when in zip(table.column("key").to_pylist(), table.column("edited_at").to_pylist()):
            if key in edited:
                known[key] = _instant(when)
    stats: dict[str, Any] = {
        "records_fetched": fetched,
        "records_new": sum(1 for k in edited if k not in known),
        "records_updated": sum(1 for k, when in edited.items() if k in known and known[k] != when),
        "records_deleted": deleted,
    }
    if newest is not None:
        stats["newest_event_lag_seconds"] = round(((now or datetime.now(timezone.utc)) - newest).total_seconds(), 1)
    return stats


def nothing_stored() -> dict[str, Any]:
    """The counts of an export sync that found the file unchanged."""
    return {"records_fetched": 0, "records_new": 0, "records_updated": 0, "records_deleted": 0}
