"""Which rows are their key's latest observation, found from 64-bit key hashes (the relation step's way: 8 bytes a
row) is exactly what the key columns themselves say, also when two different keys share a hash."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from crawl_assets.lake import Lake
from crawl_assets.pipeline.normalize.stage import TABLE
from crawl_assets.pipeline.relate.parts import latest_masks, latest_rows

PARTS = {"20260101T000000000000Z-a-0000": ["x:1", "x:2", "x:3", "x:2"],
         "20260102T000000000000Z-a-0000": ["x:4", "x:1", "x:55"],
         "20260103T000000000000Z-a-0000": ["x:66", "x:4", "x:7", "x:7"]}


def lake_of(tmp_path) -> Lake:
    lake = Lake(str(tmp_path / "lake"))
    for batch_id, keys in PARTS.items():
        lake.write_part(lake.table_part(TABLE, "t", "x", "t.x.s", batch_id), pa.table({"key": keys}), version="v")
    return lake


def test_hashed_masks_are_the_key_columns_masks(tmp_path) -> None:
    lake = lake_of(tmp_path)
    ids = list(PARTS)
    want = latest_rows(lake, "t", "x", "t.x.s", ids)[0]
    for hash_key in (None, len):  # ``len``: "x:55" and "x:66" (and every other pair of equal lengths) collide
        got = latest_masks(lake, "t", "x", "t.x.s", ids, **({"hash_key": hash_key} if hash_key else {}))
        assert [b for b, _ in got] == [b for b, _ in want]
        assert all(np.array_equal(g, w) for (_, g), (_, w) in zip(got, want)), (got, want)
    picked = latest_masks(lake, "t", "x", "t.x.s", ids[1:])
    assert [m.tolist() for _, m in picked] == [[False, True, True], [True, True, False, True]]


def test_hashed_masks_hold_the_hashes_and_one_sorted_copy(tmp_path) -> None:
    """Besides the masks (a byte a row), finding the latest rows holds the 64-bit hashes and one sorted copy:
    under 24 bytes a row (an argsort, its ordered copy and a second copy of the hashes took about 40)."""
    import tracemalloc

    lake = Lake(str(tmp_path / "lake"))
    rows = 400_000
    ids = ["20260101T000000000000Z-a-0000", "20260102T000000000000Z-a-0000"]
    for i, batch_id in enumerate(ids):
        keys = [f"x:{n}" for n in range(i * rows // 2 - 7 * i, (i + 1) * rows // 2)]  # 7 keys in both parts
        lake.write_part(lake.table_part(TABLE, "t", "x", "t.x.s", batch_id), pa.table({"key": keys}), version="v")
    latest_masks(lake, "t", "x", "t.x.s", ids[:1])  # imports are not the work
    tracemalloc.start()
    try:
        masks = latest_masks(lake, "t", "x", "t.x.s", ids)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [int(m.sum()) for _, m in masks] == [rows // 2 - 7, rows // 2 + 7]
    assert not masks[0][1][-7:].any() and masks[1][1][:7].all()
    assert peak < 24 * (rows + 7), peak / (rows + 7)  # about 17
