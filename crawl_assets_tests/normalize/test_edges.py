"""Relation edges (the rules, a record at a time) and the hashtag co-occurrence tables (pandas frames)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pyarrow.compute as pc

from crawl_assets.normalize.edges import EDGE_COLUMNS, document_edges, edges_frame, record_edges
from crawl_assets.pipeline.relate.parts import (AUTHOR_HASHTAG_COLUMNS, COOCCURRENCE_COLUMNS, author_hashtag,
                                                hashtag_cooccurrence)
from crawl_assets.schema import Provenance, Record

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)


def _record(key, *, hours=0, author="a1", **fields) -> Record:
    return Record(key=key, platform="x", tenant="t", source="s", kind="post", native_id=key[2:], author_id=author,
                  created_at=T0 + timedelta(hours=hours), provenance=Provenance(method="api", source="s", format="x-v2"),
                  **fields)  # fmt: skip


RECORDS = [
    _record("x:1", hashtags=["news", "تهران", "markets"], mentions=["sara"]),
    _record("x:2", hours=1, reply_to="x:1", hashtags=["news", "تهران"]),
    _record("x:3", hours=2, author="a2", quote_of="x:1", repost_of="x:9", hashtags=["news"]),
    _record("x:4", hours=3, author=None, hashtags=["news", "markets"]),
]


def test_edges_frame():
    frame = edges_frame(RECORDS)
    assert list(frame.columns) == EDGE_COLUMNS
    rows = set(frame[["type", "src", "dst"]].itertuples(index=False, name=None))
    assert ("reply", "x:2", "x:1") in rows and ("quote", "x:3", "x:1") in rows and ("repost", "x:3", "x:9") in rows
    assert ("mention", "x:1", "x:user:sara") in rows and ("hashtag", "x:1", "hashtag:تهران") in rows
    assert len(frame) == 3 + 1 + 8
    assert str(frame["created_at"].dt.tz) == "UTC"
    assert set(frame["platform"]) == {"x"} and set(frame["tenant"]) == {"t"}
    assert frame["src"].isin([r.key for r in RECORDS]).all()


def test_empty_inputs_give_empty_frames_with_columns():
    assert list(edges_frame([]).columns) == EDGE_COLUMNS
    assert list(hashtag_cooccurrence([]).columns) == COOCCURRENCE_COLUMNS
    assert list(author_hashtag([]).columns) == AUTHOR_HASHTAG_COLUMNS


def test_document_edges_equal_record_edges():
    for record in RECORDS:
        assert list(document_edges(record.model_dump())) == list(record_edges(record))


def test_hashtag_cooccurrence():
    frame = hashtag_cooccurrence(RECORDS)
    assert list(frame.columns) == COOCCURRENCE_COLUMNS
    counts = {(a, b): c for a, b, c in frame[["hashtag_a", "hashtag_b", "count"]].itertuples(index=False)}
    assert counts == {("markets", "news"): 2, ("markets", "تهران"): 1, ("news", "تهران"): 2}
    row = frame[(frame.hashtag_a == "markets") & (frame.hashtag_b == "news")].iloc[0]
    assert row.first_at == pd.Timestamp(T0) and row.last_at == pd.Timestamp(T0 + timedelta(hours=3))


def test_author_hashtag():
    frame = author_hashtag(RECORDS)
    assert list(frame.columns) == AUTHOR_HASHTAG_COLUMNS
    counts = {(a, h): c for a, h, c in frame[["author_id", "hashtag", "count"]].itertuples(index=False)}
    assert counts == {("a1", "news"): 2, ("a1", "تهران"): 2, ("a1", "markets"): 1, ("a2", "news"): 1}


def test_relate_stage_and_cli_run_the_same_rules():
    """``EDGE_RULES`` run over Arrow columns (the relate stage) and a record at a time (the CLI) give the same
    edges, on every seed of every format (superseded versions included: neither gives them edges)."""
    import io

    from crawl_assets.lake.tables import records_to_arrow
    from crawl_assets.normalize import NormalizeContext, normalize_stream
    from crawl_assets.pipeline.relate.parts import edges_of, superseded
    from crawl_assets.schema import Record
    from crawl_assets_tests.fuzz.seeds import seeds

    context = NormalizeContext(tenant="t", source="t.seeds", method="api", run_id="r")
    compared = 0
    for name, spec in sorted(seeds().items()):
        records = [item for item in normalize_stream(spec.fmt or name, io.BytesIO(spec.encode(list(spec.items))),
                                                     name=name, context=context) if isinstance(item, Record)]
        if not records:
            continue
        rows = records_to_arrow(r.model_dump() for r in records)
        rows = rows.filter(pc.invert(superseded(rows.column("metadata"))))
        arrow = {(e["type"], e["src"], e["dst"], e["platform"], e["tenant"]) for e in edges_of(rows).to_pylist()}
        one_by_one = {(t, s, d, p, n) for r in records for t, s, d, _, p, n in record_edges(r)}
        assert arrow == one_by_one, name
        compared += len(arrow)
    assert compared > 50
