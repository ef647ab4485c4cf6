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

from array import array
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.lake import Lake, RawBatch
from crawl_assets.normalize import NormalizeContext
from crawl_assets.normalize.formats import normalize_documents
from crawl_assets.normalize.key_hash import key_hash

RECORDS_TABLE = "normalized_records"  # the table ``crawl_assets.orchestration.assets.normalized_records`` writes


_NONE = -(2**63)  # edited_at absent
_UNKNOWN = _NONE + 1  # the key is in no earlier part
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _micros(when: datetime | None) -> int:
    return _NONE if when is None else (when - _EPOCH) // timedelta(microseconds=1)


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
    # per record of the export: its key's 64-bit hash and its edited_at in microseconds (8 + 8 bytes, not a
    # Python string and datetime per record: an export of a million records is counted in bounded memory)
    hashes, stamps = array("Q"), array("q")
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
            hashes.append(key_hash(doc["key"]))
            stamps.append(_micros(_instant(doc.get("edited_at"))))
            created = _instant(doc.get("created_at"))
            if created and (newest is None or created > newest):
                newest = created
    # each key once, with its latest observation in the export (the last one read)
    keys, last = np.unique(np.frombuffer(hashes, np.uint64)[::-1], return_index=True)
    edited = np.frombuffer(stamps, np.int64)[::-1][last]
    known = np.full(len(keys), _UNKNOWN, np.int64)  # edited_at of the key's latest earlier observation
    earlier = {p for p in lake.part_ids(RECORDS_TABLE, m.tenant, m.platform, m.source) if p < m.batch_id}
    for part_id in sorted(earlier):
        part = lake.table_part(RECORDS_TABLE, m.tenant, m.platform, m.source, part_id)
        for rows in lake.iter_part_batches(part, columns=["key", "edited_at"]):
            held = np.array([key_hash(k) for k in rows.column("key").to_pylist()], np.uint64)
            at = np.searchsorted(keys, held) if len(keys) else np.zeros(len(held), np.int64)
            hit = at < len(keys)
            hit[hit] = keys[at[hit]] == held[hit]
            when = pc.fill_null(rows.column("edited_at").cast(pa.int64()), _NONE).to_numpy(zero_copy_only=False)
            known[at[hit]] = when[hit]
    stats: dict[str, Any] = {
        "records_fetched": fetched,
        "records_new": int((known == _UNKNOWN).sum()),
        "records_updated": int(((known != _UNKNOWN) & (known != edited)).sum()),
        "records_deleted": deleted,
    }
    if newest is not None:
        stats["newest_event_lag_seconds"] = round(((now or datetime.now(timezone.utc)) - newest).total_seconds(), 1)
    return stats


def nothing_stored() -> dict[str, Any]:
    """The counts of an export sync that found the file unchanged."""
    return {"records_fetched": 0, "records_new": 0, "records_updated": 0, "records_deleted": 0}
