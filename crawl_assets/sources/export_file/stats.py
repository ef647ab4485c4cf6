"""What an export-file sync stored, counted in records like a live sync's (``records_fetched``, ``records_new``,
``records_updated``, ``records_deleted``, ``newest_event_lag_seconds``).

The raw step stores an export as received, in one batch. To count it, the stored batch is read once more
through its format's normalizer without pydantic validation (``normalize_encoded``: the fast path, on two
processes for a large line-based export) and
without cleaning texts or detecting languages (``NormalizeContext.text_fields``),
and its keys are compared with the source's earlier normalized parts (key and ``edited_at`` columns
only): *new* = a key no earlier part holds; *updated* = a key held before with another ``edited_at``;
*deleted* = a deletion marker. An unchanged export stores nothing and counts zero.
"""

from __future__ import annotations

import struct
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.lake import Lake, RawBatch
from crawl_assets.normalize import NormalizeContext
from crawl_assets.normalize.dedupe import BlockBuilder, BucketSpill, key_hashes
from crawl_assets.normalize.parallel import auto_jobs, normalize_encoded

RECORDS_TABLE = "normalized_records"  # the table the normalized_records asset writes


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


_COUNT = struct.Struct("<qqb")  # edited_at and created_at in microseconds, deleted
_COUNTED = np.dtype([("edited", "<i8"), ("created", "<i8"), ("deleted", "i1")])


def _key64(hashes: bytes) -> np.ndarray:
    """64 bits of each key's dedupe hash (``dedupe.key_hashes``, 128 bits: the one a block already holds)."""
    return np.frombuffer(hashes, "<u8")[::2]


def add_count(block: BlockBuilder, doc: dict[str, Any]) -> None:
    """What the counts need of a record document, as one fixed-size row of ``block`` (``normalize_encoded``'s
    ``add``); its key is hashed once, by the block (``Block.hashes``)."""
    block.main += _COUNT.pack(_micros(_instant(doc.get("edited_at"))), _micros(_instant(doc.get("created_at"))),
                              bool(doc.get("deleted")))
    block.commit(doc["key"], 0.0, 0.0)


def export_record_stats(lake: Lake, batch: RawBatch, now: datetime | None = None, *,
                        jobs: int | None = None) -> dict[str, Any]:
    """Record counts and the newest record's age for one stored export batch (read on ``jobs`` processes, by
    default ``auto_jobs`` of its size)."""
    m = batch.manifest
    # the context normalize_batch reads the batch with (the collection time dates X's "not found" errors as
    # deletions), without texts: keys and times are all the counts read
    context = NormalizeContext(tenant=m.tenant, source=m.source, method=m.method, run_id=m.run_id,
                               collected_at=datetime.fromisoformat(m.collected_at), raw_pointer=batch.path,
                               text_fields=False,
                               **m.extra.get("normalize", {}))  # as normalize_batch reads it
    # per record of the export: times in microseconds and whether it is a deletion, and its key's hash, made
    # where the record is born (on two processes for a large line-based export); counted a block at a time,
    # the live records' (key hash, edited_at) pairs spilled by hash bucket, so memory follows a block, not N
    fetched = deleted = 0
    newest_micros = _NONE
    with _Buckets() as read, _Buckets() as held, lake.open_raw(batch) as stream:
        for block, _rejections in normalize_encoded(m.format, stream, name=batch.path, context=context,
                                                    jobs=auto_jobs(m.bytes) if jobs is None else jobs, add=add_count):
            counted = np.frombuffer(bytes(block.main), _COUNTED)  # a rejection: normalized_records quarantines it
            gone = counted["deleted"] != 0
            fetched += len(counted)
            deleted += int(gone.sum())
            live = counted[~gone]
            created = live["created"]
            newest_micros = max(newest_micros, int(created.max()) if len(created) else _NONE)
            read.add(_key64(bytes(block.hashes))[~gone], live["edited"])
        earlier = {p for p in lake.part_ids(RECORDS_TABLE, m.tenant, m.platform, m.source) if p < m.batch_id}
        for part_id in sorted(earlier):
            part = lake.table_part(RECORDS_TABLE, m.tenant, m.platform, m.source, part_id)
            for rows in lake.iter_part_batches(part, columns=["key", "edited_at"]):
                when = pc.fill_null(rows.column("edited_at").cast(pa.int64()), _NONE).to_numpy(zero_copy_only=False)
                held.add(_key64(key_hashes(rows.column("key").to_pylist())), when)
        new = updated = 0
        for bucket in range(_Buckets.COUNT):
            hashes, stamps = read.bucket(bucket)
            # each key once, with its latest observation in the export (the last one read)
            keys, last = np.unique(hashes[::-1], return_index=True)
            edited = stamps[::-1][last]
            known = np.full(len(keys), _UNKNOWN, np.int64)  # edited_at of the key's latest earlier observation
            before, when = held.bucket(bucket)  # in part order: a later part's observation wins
            at = np.searchsorted(keys, before) if len(keys) else np.zeros(len(before), np.int64)
            hit = at < len(keys)
            hit[hit] = keys[at[hit]] == before[hit]
            known[at[hit]] = when[hit]
            new += int((known == _UNKNOWN).sum())
            updated += int(((known != _UNKNOWN) & (known != edited)).sum())
    newest = _EPOCH + timedelta(microseconds=newest_micros) if newest_micros != _NONE else None
    stats: dict[str, Any] = {
        "records_fetched": fetched,
        "records_new": new,
        "records_updated": updated,
        "records_deleted": deleted,
    }
    if newest is not None:
        stats["newest_event_lag_seconds"] = round(((now or datetime.now(timezone.utc)) - newest).total_seconds(), 1)
    return stats


class _Buckets(BucketSpill):
    """(64-bit key hash, time) pairs spilled in ``COUNT`` buckets by the hash's top bits, read back a bucket
    at a time in the order they were added."""

    _PAIR = np.dtype([("key", "<u8"), ("at", "<i8")])

    def __init__(self) -> None:
        super().__init__(self._PAIR, "crawl-export-counts-")

    def __enter__(self) -> _Buckets:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def add(self, keys: np.ndarray, at: np.ndarray) -> None:
        if not len(keys):
            return
        pairs = np.empty(len(keys), self._PAIR)
        pairs["key"], pairs["at"] = keys, at
        self.write(pairs, (keys >> np.uint64(58)).astype(np.intp))  # COUNT = 2**6 buckets

    def bucket(self, bucket: int) -> tuple[np.ndarray, np.ndarray]:
        """(hashes, times) of one bucket, in the order added."""
        pairs = self.rows(bucket)
        return pairs["key"], pairs["at"]


def nothing_stored() -> dict[str, Any]:
    """The counts of an export sync that found the file unchanged."""
    return {"records_fetched": 0, "records_new": 0, "records_updated": 0, "records_deleted": 0}
