"""Relation tables kept up to date by what is new: a sync with no new normalized part reads and writes no
table; appended parts get their own edge files and their counts added to the stored summary tables; either
way the tables hold the rows a rebuild from all parts writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from crawl_assets.lake import Lake
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE
from crawl_assets.pipeline.normalize.stage import normalize_batch
from crawl_assets.pipeline.relate.stage import SUMMARY_TABLES, TABLE, write_relations
from crawl_assets.pipeline.relate.stage import refresh_relations
from crawl_assets_tests.normalize.shapes import x_page, x_tweet
from crawl_assets_tests.pipeline.lake_normalize import RawInput, write_batches

TENANT, SOURCE = "acme", "acme.x.delta"
TABLES = (*SUMMARY_TABLES, TABLE)


def _tweet(n: int, tags: list[str], *, mention: str | None = None, reply_to: int | None = None,
           likes: int = 3) -> dict:
    text = " ".join(f"#{t}" for t in tags) + (f" @{mention}" if mention else "") + f" post {n}"
    entities: dict = {"hashtags": [{"start": 0, "end": 1, "tag": t} for t in tags]}
    if mention:
        entities["mentions"] = [{"start": 0, "end": 1, "username": mention}]
    fields: dict = {"entities": entities, "created_at": f"2024-05-0{1 + n % 8}T1{n % 10}:00:00.000Z",
                    "author_id": str(1000 + n % 3)}
    if reply_to is not None:
        fields["referenced_tweets"] = [{"type": "replied_to", "id": str(9000 + reply_to)}]
    tweet = x_tweet(str(9000 + n), text, **fields)
    tweet["public_metrics"]["like_count"] = likes
    return tweet


def _add_batch(root: Path, seq: int, tweets: list[dict]) -> None:
    batch_id = f"20240502T1100000000{seq:02d}Z-r1-0000"
    lake = write_batches(root, TENANT, "x", SOURCE, [RawInput(batch_id, "x-v2", [x_page(*tweets)], method="api")])
    batch = next(b for b in lake.raw_batches(TENANT, "x", SOURCE) if b.manifest.batch_id == batch_id)
    normalize_batch(lake, batch, lake.table_part(RECORDS_TABLE, TENANT, "x", SOURCE, batch_id))


def _files(root: Path) -> dict[str, list]:
    """Each table's rows (edges of every part file together, in edge order; summaries as stored)."""
    lake = Lake(str(root))
    rows = {name: [r for _, t in lake.read_parts(name, TENANT, "x", SOURCE) for r in t.to_pylist()] for name in TABLES}
    rows[TABLE].sort(key=lambda r: (r["type"], r["src"], r["dst"]))
    return rows


def _rebuilt(root: Path, tmp_path: Path) -> dict[str, list]:
    """The three tables as a rebuild from all parts writes them (in a copy of the lake)."""
    copy = tmp_path / "rebuilt"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy)
    shutil.rmtree(copy / "tables" / TABLE)
    write_relations(Lake(str(copy)), TENANT, "x", SOURCE)
    return _files(copy)


FIRST = [_tweet(1, ["tehran", "news"], mention="alice"), _tweet(2, ["news"]), _tweet(3, ["tehran", "art", "news"])]


def test_a_sync_with_nothing_new_reads_and_writes_no_table(tmp_path):
    root = tmp_path / "lake"
    _add_batch(root, 1, FIRST)
    lake = Lake(str(root))
    assert refresh_relations(lake, TENANT, "x", SOURCE).mode == "full"
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}
    again = refresh_relations(lake, TENANT, "x", SOURCE)
    assert again.mode == "up_to_date" and again.new_parts == 0
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()} == before
    assert again.inputs.records == 3 and again.inputs.edges_by_type == {"hashtag": 6, "mention": 1}
    assert again.inputs.summary_rows["hashtag_cooccurrence"] == 3  # (news,tehran) twice, (art,news), (art,tehran)


def test_appended_parts_are_added_and_equal_a_rebuild(tmp_path):
    root = tmp_path / "lake"
    _add_batch(root, 1, FIRST)
    lake = Lake(str(root))
    refresh_relations(lake, TENANT, "x", SOURCE)
    # new posts, plus post 2 read again with only a metric changed (its edges and counts stay)
    _add_batch(root, 2, [_tweet(4, ["tehran", "news"], reply_to=1), _tweet(2, ["news"], likes=50),
                         _tweet(5, ["art", "zed"], mention="bob")])
    _add_batch(root, 3, [_tweet(6, ["news", "tehran"], mention="alice")])
    done = refresh_relations(lake, TENANT, "x", SOURCE)
    assert done.mode == "incremental" and done.new_parts == 2
    assert done.inputs.records == 6
    assert _files(root) == _rebuilt(root, tmp_path)
    rows = pq.read_table(lake.path(lake.table_part("hashtag_cooccurrence", TENANT, "x", SOURCE, "current")))
    counts = {(r["hashtag_a"], r["hashtag_b"]): r["count"] for r in rows.to_pylist()}
    assert counts[("news", "tehran")] == 4 and counts[("art", "zed")] == 1
    assert done.inputs.orphans == 0
    assert len(lake.part_ids(TABLE, TENANT, "x", SOURCE)) == 3, "one edge file per normalized part"


def test_a_post_that_changed_its_relations_rebuilds_and_equals_a_rebuild(tmp_path):
    root = tmp_path / "lake"
    _add_batch(root, 1, FIRST)
    lake = Lake(str(root))
    refresh_relations(lake, TENANT, "x", SOURCE)
    _add_batch(root, 2, [_tweet(3, ["art"]), _tweet(7, ["news"])])  # post 3 lost two hashtags: counts drop
    done = refresh_relations(lake, TENANT, "x", SOURCE)
    assert done.mode == "full"
    assert _files(root) == _rebuilt(root, tmp_path)
    rows = pq.read_table(lake.path(lake.table_part("hashtag_cooccurrence", TENANT, "x", SOURCE, "current")))
    assert {(r["hashtag_a"], r["hashtag_b"]): r["count"] for r in rows.to_pylist()} == {("news", "tehran"): 1}


def test_tables_a_crash_left_disagreeing_are_rebuilt(tmp_path):
    root = tmp_path / "lake"
    _add_batch(root, 1, FIRST)
    lake = Lake(str(root))
    refresh_relations(lake, TENANT, "x", SOURCE)
    _add_batch(root, 2, [_tweet(8, ["tehran", "news"])])
    summary = Path(lake.path(lake.table_part("hashtag_cooccurrence", TENANT, "x", SOURCE, "current")))
    stale = summary.read_bytes()
    refresh_relations(lake, TENANT, "x", SOURCE)
    # as if the run died after writing the edges but before the summary (the watermarks now differ)
    summary.write_bytes(stale)
    done = refresh_relations(lake, TENANT, "x", SOURCE)
    assert done.mode == "full"
    assert _files(root) == _rebuilt(root, tmp_path)


def test_an_edge_file_written_before_a_crash_makes_the_next_sync_rebuild(tmp_path):
    root = tmp_path / "lake"
    _add_batch(root, 1, FIRST)
    lake = Lake(str(root))
    refresh_relations(lake, TENANT, "x", SOURCE)
    summaries = {name: Path(lake.path(lake.table_part(name, TENANT, "x", SOURCE, "current"))).read_bytes()
                 for name in SUMMARY_TABLES}
    _add_batch(root, 2, [_tweet(9, ["tehran"])])
    assert refresh_relations(lake, TENANT, "x", SOURCE).mode == "incremental"
    for name, stale in summaries.items():  # as if the run died after the new edge file, before the summaries
        Path(lake.path(lake.table_part(name, TENANT, "x", SOURCE, "current"))).write_bytes(stale)
    assert refresh_relations(lake, TENANT, "x", SOURCE).mode == "full"
    assert _files(root) == _rebuilt(root, tmp_path)


def test_an_edge_that_starts_at_no_record_of_its_part_is_found(tmp_path):
    from crawl_assets.pipeline.relate.stage import part_orphans

    root = tmp_path / "lake"
    _add_batch(root, 1, FIRST)
    lake = Lake(str(root))
    refresh_relations(lake, TENANT, "x", SOURCE)
    [part] = lake.part_ids(TABLE, TENANT, "x", SOURCE)
    assert part_orphans(lake, TENANT, "x", SOURCE, part) == []
    [(_, edges)] = lake.read_parts(TABLE, TENANT, "x", SOURCE)
    foreign = edges.slice(0, 1).set_column(1, "src", pa.array(["x:elsewhere"]))
    # the part's edge file rewritten with one edge from a record the part does not hold
    lake.write_part(lake.table_part(TABLE, TENANT, "x", SOURCE, part), pa.concat_tables([edges, foreign]), version="g")
    assert part_orphans(lake, TENANT, "x", SOURCE, part) == ["x:elsewhere"]
