"""A raw batch's records part is the same whether one process normalizes it or two (``normalize_batch``'s
``jobs``): same rows in the same order, edits resolved against an earlier part, repeated observations deduped,
tombstones merged with the earlier content they name; and rows read into Arrow in bulk (``pipeline.normalize.part``)
hold what the records as dicts held."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
from crawl_assets_tests.normalize.shapes import x_not_found, x_page, x_tweet
from crawl_assets_tests.pipeline.lake_normalize import RawInput, write_batches

TENANT, SOURCE = "acme", "acme.x.parts"
EARLY, LATE = "20240502T110000000000Z-r1-0000", "20240502T120000000000Z-r1-0000"
TWEETS = 16_000
V1, V2, V3 = "1790000000000000001", "1790000000000001000", "1790000000000002000"


def _page(first: int, count: int, likes: int) -> bytes:
    return x_page(*[x_tweet(str(100_000 + n), f"#t{n % 7} سلام @u{n % 5} post {n}",
                            entities={"hashtags": [{"start": 0, "end": 3, "tag": f"t{n % 7}"}]},
                            public_metrics={"like_count": likes}) for n in range(first, first + count)])


def _inputs() -> list[RawInput]:
    early = [x_page(x_tweet(V1, "first wording", edit_history_tweet_ids=[V1])), x_page(x_tweet("200003", "to be deleted"))]
    # over 4 MiB: two processes normalize it in more than one chunk
    late = [_page(start, 100, likes=1) for start in range(0, TWEETS, 100)]
    late.insert(3, _page(0, 50, likes=9))  # read again later in the batch: these observations win
    late.insert(5, json.dumps({"errors": [x_not_found("200003")]}).encode())  # gone since: a tombstone
    late.append(x_page(x_tweet(V3, "final wording", edit_history_tweet_ids=[V1, V2, V3])))
    late.append(x_page(x_tweet(V2, "second wording", edit_history_tweet_ids=[V1, V2])))
    return [RawInput(EARLY, "x-v2", early, method="api"), RawInput(LATE, "x-v2", late, method="api")]


def _comparable(part: pa.Table) -> list[dict]:
    """The part's rows without what names the lake's place and the time its batch was written."""
    rows = list(arrow_to_records(part))
    for row in rows:
        row["deleted_at"] = row["deleted_at"] is not None
        row["provenance"] = {k: v for k, v in row["provenance"].items() if k not in ("raw_pointer", "collected_at")}
    return rows


def _late_part(root: Path, jobs: int) -> tuple[pa.Table, object]:
    lake = write_batches(root, TENANT, "x", SOURCE, _inputs())
    early, late = lake.raw_batches(TENANT, "x", SOURCE)
    assert normalize_batch(lake, early, lake.table_part(TABLE, TENANT, "x", SOURCE, EARLY), jobs=1).rows == 2
    part = lake.table_part(TABLE, TENANT, "x", SOURCE, LATE)
    result = normalize_batch(lake, late, part, jobs=jobs)
    return Lake(str(root)).read_parts(TABLE, TENANT, "x", SOURCE, include={LATE}.__contains__).__next__()[1], result


def test_two_processes_write_the_part_one_process_writes(tmp_path: Path) -> None:
    one, one_result = _late_part(tmp_path / "one", jobs=1)
    two, two_result = _late_part(tmp_path / "two", jobs=2)
    assert one.num_rows == TWEETS + 3 + 1  # every tweet once, three versions (one carried over), the tombstone
    assert one.schema.equals(two.schema) and _comparable(one) == _comparable(two)
    assert (one_result.rows, one_result.invalid, one_result.duplicates) == (two_result.rows, [], [])

    rows = {r["key"]: r for r in arrow_to_records(one)}
    assert rows["x:100001"]["metrics"]["likes"] == 9 and rows["x:100051"]["metrics"]["likes"] == 1
    assert rows[f"x:{V1}"]["metadata"]["superseded_by"] == f"x:{V3}", "the earlier part's version is marked"
    assert rows[f"x:{V3}"]["metadata"]["edit_history_tweet_ids"] == [V1, V2, V3]
    gone = rows["x:200003"]
    assert gone["deleted"] and gone["text"] == "to be deleted", "the tombstone keeps the content seen before"
    assert rows["x:100010"]["hashtags"] == ["t3"] and rows["x:100010"]["text"].startswith("#t3 سلام")


def test_an_export_is_counted_the_same_on_two_processes(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    from crawl_assets.sources.export_file.stats import export_record_stats

    lake = write_batches(tmp_path, TENANT, "x", SOURCE, _inputs())
    early, late = lake.raw_batches(TENANT, "x", SOURCE)
    normalize_batch(lake, early, lake.table_part(TABLE, TENANT, "x", SOURCE, EARLY), jobs=1)
    now = datetime(2024, 5, 3, tzinfo=timezone.utc)
    one = export_record_stats(lake, late, now, jobs=1)
    assert one == export_record_stats(lake, late, now, jobs=2)
    # every observation read (the 50 read twice too), the tombstone (dated by the batch), the two new versions
    assert one["records_fetched"] == TWEETS + 50 + 1 + 2 and one["records_deleted"] == 1
    assert one["records_new"] == TWEETS + 2 and one["newest_event_lag_seconds"] == 46_800.0
