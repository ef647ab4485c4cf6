"""The pieces that keep a large part's memory bounded give what holding it whole gave: edge files written a
record batch at a time hold the edges of the whole part, keys tallied as hashes name the repeated ones exactly,
and the last position of each key is Arrow's ``group_by`` maximum; reading a part for its edges holds about one
row group of it, however many it has."""

from __future__ import annotations

import os
import tracemalloc
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from crawl_assets.lake import Lake
from crawl_assets.lake.tables import RECORDS_SCHEMA
from crawl_assets.pipeline.normalize.part import KeyTally, rows_with_keys
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE
from crawl_assets.pipeline.normalize.stage import normalize_batch
from crawl_assets.pipeline.relate.parts import (
    BATCH_ROWS,
    READ_COLUMNS,
    Summaries,
    edges_of,
    last_positions,
    part_edge_batches,
    superseded,
)
from crawl_assets.pipeline.relate.stage import TABLE, write_relations
from crawl_assets.sources.export_file.stats import export_record_stats
from crawl_assets_tests.normalize.shapes import x_page, x_tweet
from crawl_assets_tests.pipeline.lake_normalize import RawInput, write_batches

TENANT, SOURCE = "acme", "acme.x.big"


def _tweet(n: int) -> dict:
    tags = [f"t{n % 7}", f"t{n % 11}"]
    fields: dict = {"entities": {"hashtags": [{"start": 0, "end": 1, "tag": t} for t in tags],
                                 "mentions": [{"start": 0, "end": 1, "username": f"u{n % 13}"}]},
                    "created_at": f"2024-05-0{1 + n % 8}T1{n % 10}:00:00.000Z", "author_id": str(1000 + n % 5)}
    if n % 4 == 0 and n:
        fields["referenced_tweets"] = [{"type": "replied_to", "id": str(100_000 + n - 1)}]
    return x_tweet(str(100_000 + n), " ".join(f"#{t}" for t in tags) + f" post {n}", **fields)


def test_edge_file_written_per_record_batch_holds_the_whole_parts_edges(tmp_path: Path) -> None:
    records = 2 * BATCH_ROWS + 1_500
    batch_id = "20240502T110000000001Z-r1-0000"
    pages = [x_page(*[_tweet(n) for n in range(start, min(start + 100, records))]) for start in range(0, records, 100)]
    lake = write_batches(tmp_path, TENANT, "x", SOURCE, [RawInput(batch_id, "x-v2", pages, method="api")])
    [batch] = lake.raw_batches(TENANT, "x", SOURCE)
    part = lake.table_part(RECORDS_TABLE, TENANT, "x", SOURCE, batch_id)
    assert normalize_batch(lake, batch, part).rows == records
    held = write_relations(lake, TENANT, "x", SOURCE)

    stored = pq.ParquetFile(lake.path(lake.table_part(TABLE, TENANT, "x", SOURCE, batch_id)))
    assert stored.metadata.num_row_groups == 3  # one per record batch, never the whole part at once
    for i in range(stored.metadata.num_row_groups):  # each sorted by (type, src, dst), each edge once
        group = stored.read_row_group(i)
        triples = list(zip(*(group.column(c).to_pylist() for c in ("type", "src", "dst"))))
        assert triples == sorted(set(triples))
    rows = Lake(str(tmp_path)).read_parts(RECORDS_TABLE, TENANT, "x", SOURCE)
    whole = pa.concat_tables([table.select(READ_COLUMNS) for _, table in rows])
    whole = whole.filter(pc.invert(superseded(whole.column("metadata"))))
    expected = edges_of(whole)  # the part's edges computed at once (as before: sorted and unique globally)
    got = stored.read().replace_schema_metadata(None).sort_by([("type", "ascending"), ("src", "ascending"),
                                                                ("dst", "ascending")])
    assert got.to_pylist() == expected.replace_schema_metadata(None).to_pylist()
    assert sum(held.edges_by_type.values()) == expected.num_rows and held.records == records and held.orphans == 0


def test_key_tally_names_repeated_keys_exactly() -> None:
    tally = KeyTally()
    tally.update(["x:1", "x:2", "x:3"])
    tally.update(["x:2", "x:\udc80lone", "x:\udc80lone"])
    keys = [["x:1", "x:2", "x:3"], ["x:2", "x:\udc80lone", "x:\udc80lone"]]
    assert tally.repeated(iter(keys)) == ["x:2", "x:\udc80lone"]
    assert tally.holds(["x:3", "x:4"]) == {"x:3"} and len(tally) == 6
    assert KeyTally().repeated(iter([])) == [] and KeyTally().holds(["x:1"]) == set()


def test_no_repeat_reads_nothing_back() -> None:
    tally = KeyTally()
    tally.update(f"x:{n}" for n in range(1_000))

    def never():  # noqa: ANN202 - a generator that fails when advanced
        raise AssertionError("the keys are read back only when two hashes are equal")
        yield []

    assert tally.repeated(never()) == []


def test_last_positions_equal_group_by_maximum() -> None:
    rng = np.random.default_rng(3)
    keys = pa.chunked_array([pa.array([f"k{v}" for v in rng.integers(0, 500, 3_000)]) for _ in range(3)])
    unique, last = last_positions(keys)
    table = pa.table({"key": keys, "at": pa.array(np.arange(len(keys)))})
    grouped = table.group_by("key", use_threads=False).aggregate([("at", "max")])
    assert dict(zip(unique.to_pylist(), last.tolist())) == dict(zip(grouped.column("key").to_pylist(),
                                                                    grouped.column("at_max").to_pylist()))
    assert len(last_positions(pa.array([], pa.string()))[1]) == 0


def _wide_rows(start: int, rows: int) -> pa.Table:
    """Records of the columns the relation step reads, each with ~1 KiB of incompressible metadata."""
    n = range(start, start + rows)
    columns = {"key": [f"x:{i}" for i in n], "created_at": [datetime(2024, 5, 1, tzinfo=timezone.utc)] * rows,
               "platform": ["x"] * rows, "tenant": [TENANT] * rows, "author_id": [str(i % 7) for i in n],
               "reply_to": [f"x:{i - 1}" if i % 3 == 0 else None for i in n], "quote_of": [None] * rows,
               "repost_of": [None] * rows, "mentions": [[f"u{i % 5}"] for i in n], "hashtags": [[]] * rows,
               "metadata": [f'{{"pad": "{os.urandom(512).hex()}"}}' for _ in n]}
    schema = pa.schema([RECORDS_SCHEMA.field(c) for c in READ_COLUMNS])
    return pa.table([pa.array(columns[c], schema.field(c).type) for c in READ_COLUMNS], schema=schema)


WIDE_ROWS = 60 * 400  # a part of 60 row groups of 400 wide rows


def _wide_part(root: Path) -> tuple[Lake, str, int]:
    """(lake, batch id, bytes) of a records part of ``WIDE_ROWS`` wide rows (``_wide_rows``) in 60 row groups."""
    lake = Lake(str(root))
    batch_id = "20240502T110000000001Z-r1-0000"
    part = lake.table_part(RECORDS_TABLE, TENANT, "x", SOURCE, batch_id)
    lake.write_part_chunks(part, (_wide_rows(g * 400, 400) for g in range(60)),
                           pa.schema([RECORDS_SCHEMA.field(c) for c in READ_COLUMNS]), version="v")
    return lake, batch_id, os.path.getsize(lake.path(part))


def test_a_parts_edges_are_read_holding_about_one_row_group(tmp_path: Path) -> None:
    """Read a record batch at a time, a part of 60 row groups costs the relation step well under a tenth of
    the part in Python memory (a pre-buffered Parquet read kept every column chunk it read until the end: the
    whole part, growing with it)."""
    lake, batch_id, size = _wide_part(tmp_path)
    list(part_edge_batches(lake, TENANT, "x", SOURCE, batch_id, None, Summaries()))  # imports are not the work
    tracemalloc.start()
    try:
        done = [(edges.num_rows, n) for edges, n in part_edge_batches(lake, TENANT, "x", SOURCE, batch_id, None,
                                                                       Summaries())]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(n for _, n in done) == WIDE_ROWS
    assert sum(e for e, _ in done) == WIDE_ROWS + WIDE_ROWS // 3  # a mention each, a reply every third
    assert peak < 0.1 * size, (peak, size)


def _export_count_peak(root: Path, tweets: int) -> tuple[int, dict]:
    """Python memory at the peak of counting a stored export of ``tweets`` tweets (one process), and the counts."""
    pages = [x_page(*[x_tweet(str(1_000_000 + n), f"post {n}") for n in range(start, min(start + 100, tweets))])
             for start in range(0, tweets, 100)]
    lake = write_batches(root, TENANT, "x", SOURCE, [RawInput("20240502T110000000001Z-r1-0000", "x-v2", pages)])
    [batch] = lake.raw_batches(TENANT, "x", SOURCE)
    export_record_stats(lake, batch, jobs=1)  # imports and first-use caches are not the work
    tracemalloc.start()
    try:
        counts = export_record_stats(lake, batch, jobs=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, counts


def test_counting_an_export_holds_a_block_not_the_export(tmp_path: Path) -> None:
    """Counting 4x more records costs well under 10 bytes a record more at the peak: the live records' key
    hashes and times are spilled by bucket (holding 33 bytes a record, joined and copied, grew ~35 a record)."""
    small, large = 5_000, 20_000
    peak_small, counts_small = _export_count_peak(tmp_path / "small", small)
    peak_large, counts_large = _export_count_peak(tmp_path / "large", large)
    assert (counts_small["records_fetched"], counts_small["records_new"]) == (small, small)
    assert (counts_large["records_fetched"], counts_large["records_new"], counts_large["records_updated"]) == (large, large, 0)
    assert peak_large - peak_small < 10 * (large - small), (peak_small, peak_large)


def test_rows_with_keys_reads_a_large_part_a_batch_at_a_time(tmp_path: Path) -> None:
    """Looking up a few keys in an earlier part of 60 row groups returns their rows in part order and holds
    well under a tenth of the part in Python memory (its key column as Python strings, or the part read whole,
    grew with it)."""
    lake, batch_id, size = _wide_part(tmp_path)
    wanted = {"x:23999", "x:5", "x:absent"}
    list(rows_with_keys(lake, RECORDS_TABLE, TENANT, "x", SOURCE, [batch_id], wanted))
    tracemalloc.start()
    try:
        found = [key for table in rows_with_keys(lake, RECORDS_TABLE, TENANT, "x", SOURCE, [batch_id], wanted)
                 for key in table.column("key").to_pylist()]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == ["x:5", "x:23999"]
    assert list(rows_with_keys(lake, RECORDS_TABLE, TENANT, "x", SOURCE, [batch_id], ())) == []
    assert peak < 0.1 * size, (peak, size)
