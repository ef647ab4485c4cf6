"""The no-op index step's expected count, read columnar, equals ``scan_keys``' row-by-row count."""

from __future__ import annotations

from crawl_assets.lake import Lake
from crawl_assets.lake.tables import records_to_arrow
from crawl_assets.pipeline.index.stage import live_key_count, scan_keys

SOURCE = "acme.x.counted"


def _part(lake: Lake, batch_id: str, rows: list[tuple[str, bool]]) -> None:
    table = records_to_arrow({"key": k, "deleted": d, "platform": "x", "tenant": "acme"} for k, d in rows)
    lake.write_part(lake.table_part("normalized_records", "acme", "x", SOURCE, batch_id), table, version="v")


def test_latest_observation_decides_and_matches_scan_keys(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    assert live_key_count(lake, "acme", "x", SOURCE) == 0
    _part(lake, "20240501T000000000000Z-r1-0000", [("x:1", False), ("x:2", False), ("x:3", True)])
    _part(lake, "20240502T000000000000Z-r1-0000", [("x:1", True), ("x:3", False), ("x:4", True)])
    _part(lake, "20240503T000000000000Z-r1-0000", [("x:5", False)])
    assert live_key_count(lake, "acme", "x", SOURCE) == 3  # x:2, x:3 (revived), x:5
    assert scan_keys(lake, "acme", "x", SOURCE, set())[1] == 3
