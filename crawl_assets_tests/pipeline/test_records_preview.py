"""The materialization preview picks its rows in Arrow: the same table as sorting every row in Python."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pyarrow as pa

from crawl_assets.orchestration.assets.chain import PREVIEW_ROWS, newest_rows, preview_table


def test_newest_rows_give_the_same_preview_as_all_rows():
    base = datetime(2024, 5, 1, tzinfo=timezone.utc)
    times = [base + timedelta(seconds=s) for s in (5, 9, 9, 1, 9, 7)] + [None, base, None]  # ties, no times
    table = pa.table({"key": [f"x:{i}" for i in range(len(times))], "created_at": times,
                      "lang": ["fa", "en"] * 4 + ["fa"], "kind": ["post"] * len(times),
                      "deleted": [False, True] * 4 + [False]})
    picked = newest_rows(table)
    assert picked.num_rows == PREVIEW_ROWS
    assert preview_table(picked.to_pylist()) == preview_table(table.to_pylist())
    assert picked.column("key").to_pylist()[:5] == ["x:1", "x:2", "x:4", "x:5", "x:0"]
