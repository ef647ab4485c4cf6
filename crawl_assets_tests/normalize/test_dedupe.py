"""One record per key, latest observation winning (edit time, then collection time, then input order)."""

from __future__ import annotations

import tracemalloc
from datetime import datetime, timedelta, timezone

from crawl_assets.normalize import Deduper, dedupe_latest
from crawl_assets.normalize.dedupe import BlockBuilder
from crawl_assets.schema import Provenance, Record

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)


def _record(key: str, text: str, edited: int | None = None, collected: int | None = None) -> Record:
    return Record(
        key=key, platform="x", tenant="t", source="s", kind="post", native_id=key.split(":")[-1], created_at=T0,
        edited_at=T0 + timedelta(hours=edited) if edited is not None else None, text=text,
        provenance=Provenance(method="api", source="s", format="x-v2",
                              collected_at=T0 + timedelta(days=collected) if collected is not None else None),
    )  # fmt: skip


def test_latest_edit_wins_over_later_collection():
    records = [_record("x:1", "edited", edited=2, collected=1), _record("x:1", "stale", edited=1, collected=5)]
    assert [r.text for r in dedupe_latest(records)] == ["edited"]


def test_unedited_loses_to_edited():
    records = [_record("x:1", "edited", edited=1), _record("x:1", "original")]
    assert [r.text for r in dedupe_latest(records)] == ["edited"]


def test_then_latest_collection_then_input_order():
    records = [
        _record("x:1", "newer", collected=3), _record("x:1", "older", collected=1),
        _record("x:2", "first"), _record("x:2", "second"),
        _record("x:3", "unknown time"), _record("x:3", "known time", collected=1),
    ]  # fmt: skip
    out = list(dedupe_latest(records))
    assert {r.key: r.text for r in out} == {"x:1": "newer", "x:2": "second", "x:3": "known time"}


def test_output_follows_input_order_of_the_winners_and_is_deterministic():
    records = [_record(f"x:{i % 7}", f"v{i}", collected=i) for i in range(30)]
    out = [r.text for r in dedupe_latest(records)]
    assert out == ["v23", "v24", "v25", "v26", "v27", "v28", "v29"]
    assert out == [r.text for r in dedupe_latest(records)]


def test_records_come_back_equal():
    record = _record("telegram:1:2", "سلام", edited=1, collected=1)
    assert list(dedupe_latest([record])) == [record]
    assert list(dedupe_latest([])) == []


def test_deduper_counts_and_payloads():
    deduper = Deduper()
    for i in range(1000):
        deduper.add(f"k{i % 100}", None, T0 + timedelta(seconds=i), f"p{i}".encode())
    winners = list(deduper.winners())
    assert winners == [f"p{i}".encode() for i in range(900, 1000)]
    assert (deduper.total, deduper.unique, deduper.duplicates) == (1000, 100, 900)


def test_keys_that_differ_only_slightly_stay_apart():
    deduper = Deduper()
    keys = ["x:1", "x:1 ", "X:1", "x:10", "telegram:1:23", "telegram:12:3", "x:\ud800"]
    for key in keys:
        deduper.add(key, None, None, key.encode("utf-8", "surrogatepass"))
    assert len(list(deduper.winners())) == len(keys)


def _dedupe_peak(records: int) -> int:
    """Peak bytes Python allocated while ``records`` observations (half of them repeated keys) are deduplicated."""
    tracemalloc.start()
    try:
        deduper = Deduper()
        for start in range(0, records, 2_000):
            builder = BlockBuilder()
            for i in range(start, min(start + 2_000, records)):
                builder.add(f"x:{i % (records // 2)}", float(i % 5), float(i), b"p")
            deduper.add_block(builder.build())
        won = sum(1 for _ in deduper.winners())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert won == deduper.unique == records // 2
    return peak


def test_deciding_the_winners_holds_a_bucket_not_every_observation():
    """Rank rows are spilled by hash bucket and sorted a bucket at a time: 80k more observations cost a flag
    byte each and a slightly larger bucket (holding every observation's hash and times, then sorting them
    all, cost ~70 bytes each)."""
    _dedupe_peak(2_000)  # imports are not the work
    small, large = _dedupe_peak(20_000), _dedupe_peak(100_000)
    assert (large - small) / 80_000 < 4
