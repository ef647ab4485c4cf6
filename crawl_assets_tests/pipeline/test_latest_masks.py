"""Which rows are their key's latest observation, found from 64-bit key hashes (the relation step's way: 8 bytes a
row) is exactly what the key columns themselves say, also when two different keys share a hash."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from crawl_assets.lake import Lake
from crawl_assets.pipeline.normalize.batch import TABLE
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
