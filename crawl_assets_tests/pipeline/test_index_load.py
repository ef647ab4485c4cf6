"""The index load sends the edges the relation step wrote (its edge files), each with its record's version: also
the edges of a record seen again unchanged (they stay in an earlier part's file) and edges of a file whose row
groups do not follow the record batches (another layout), which take the slow path to the same result."""

from __future__ import annotations

from datetime import datetime, timezone

import orjson
import pyarrow.parquet as pq

from crawl_assets.index.naming import read_alias
from crawl_assets.index.sink import edge_id
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.persian.lemma import lemma_text
from crawl_assets.pipeline.index.stage import marker_body, pending_parts, pending_records, scan_keys
from crawl_assets.pipeline.index.stage import load
from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
from crawl_assets.pipeline.relate.stage import TABLE as EDGES
from crawl_assets.pipeline.relate.stage import refresh_relations
from crawl_assets_tests.es_node.inspect import all_docs

TENANT, PLATFORM, SOURCE = "acme", "telegram", "acme.telegram.news"


def message(mid: int, text: str, views: int) -> bytes:
    entities = [{"_": "MessageEntityHashtag" if w[0] == "#" else "MessageEntityMention", "offset": text.index(w),
                 "length": len(w)} for w in text.split() if w[0] in "#@"]
    return orjson.dumps({"_": "Message", "id": mid, "peer_id": {"_": "PeerChannel", "channel_id": 777},
                         "date": "2026-01-05T10:00:00+00:00", "message": text, "post": True, "entities": entities,
                         "views": views, **({"reply_to": {"_": "MessageReplyHeader", "reply_to_msg_id": mid - 1}}
                                            if mid % 3 == 0 else {})})


def sync(lake: Lake, day: int, lines: list[bytes]) -> None:
    """A raw batch collected on ``day``, normalized, and the relation tables brought up to date."""
    batch = lake.write_raw_batch(tenant=TENANT, platform=PLATFORM, source=SOURCE, fmt="telegram", method="api",
                                 batch_id=f"202601{day:02d}T100000000000Z-r{day}-0000", run_id=f"r{day}", lines=lines,
                                 collected_at=datetime(2026, 1, day, 12, tzinfo=timezone.utc))
    normalize_batch(lake, batch, lake.table_part(TABLE, TENANT, PLATFORM, SOURCE, batch.manifest.batch_id))
    refresh_relations(lake, TENANT, PLATFORM, SOURCE)


def index(lake: Lake, client) -> tuple[int, int]:
    """One load of the pending parts, marked as the step marks them."""
    pending = pending_records(lake, TENANT, PLATFORM, SOURCE, pending_parts(lake, TENANT, PLATFORM, SOURCE)[1])
    seen, _ = scan_keys(lake, TENANT, PLATFORM, SOURCE, pending.keys)
    done = load(client, lake, TENANT, PLATFORM, SOURCE, pending, seen, run_id="t")
    assert done.records.failed == done.edges.failed == 0 and done.records.unaccounted == done.edges.unaccounted == 0
    for marker in pending.markers:
        lake.write_bytes(marker, marker_body("t"))
    return done.edges.docs, done.resolved_late


def table_edges(lake: Lake) -> set[str]:
    return {edge_id(e) for _, t in lake.read_parts(EDGES, TENANT, PLATFORM, SOURCE) for e in arrow_to_records(t)}


def live(client, family: str) -> dict:
    return {k: h for k, h in all_docs(client, read_alias(family, TENANT)).items() if not h.source.get("deleted")}


def test_edges_come_from_the_edge_files_with_their_records_versions(tmp_path, es_cluster) -> None:
    lake, client = Lake(str(tmp_path / "lake")), es_cluster.client
    sync(lake, 5, [message(i, f"خبر {i} #اقتصاد @reporter", views=i) for i in range(1, 8)])
    sent, late = index(lake, client)
    assert late == 0 and sent == len(table_edges(lake)) == 16
    records, edges = live(client, "records"), live(client, "edges")
    assert set(edges) == table_edges(lake)
    assert all(edges[e].version == records[e_src].version for e in edges
               for e_src in [edges[e].source["src"]]), "every edge has its record's version"
    assert set(next(iter(edges.values())).source) == {"type", "src", "dst", "created_at", "platform", "tenant"}
    by_lemma = client.count(index=read_alias("records", TENANT), query={"term": {"text_lemma": lemma_text("خبرهای")}})
    assert by_lemma["count"] == 7, "records loaded from Arrow carry text_lemma"

    # Seen again with new metrics only: the relation step leaves their edges in the first part's file; the load
    # still re-sends them with the newer version and prunes nothing.
    sync(lake, 6, [message(i, f"خبر {i} #اقتصاد @reporter", views=100 + i) for i in (2, 3)])
    assert table_edges(lake) == set(edges)
    new = pq.read_table(lake.path(lake.table_part(EDGES, TENANT, PLATFORM, SOURCE, "20260106T100000000000Z-r6-0000")))
    assert new.num_rows == 0, "the unchanged records' edges stayed where they were"
    sent, late = index(lake, client)
    records, after = live(client, "records"), live(client, "edges")
    assert sent == 5 and set(after) == set(edges), "their 5 edges, none pruned"
    assert all(after[e].version == records[after[e].source["src"]].version for e in after)
    again = [e for e in after if after[e].source["src"] == "telegram:777:2"]
    assert again and all(after[e].version > edges[e].version for e in again), "the newer observation's version"


def test_an_edge_file_of_another_layout_takes_the_slow_path_to_the_same_documents(tmp_path, es_cluster) -> None:
    lake, client = Lake(str(tmp_path / "lake")), es_cluster.client
    sync(lake, 5, [message(i, f"خبر {i} #اقتصاد @reporter", views=i) for i in range(1, 8)])
    [batch_id] = lake.part_ids(EDGES, TENANT, PLATFORM, SOURCE)
    path = lake.path(lake.table_part(EDGES, TENANT, PLATFORM, SOURCE, batch_id))
    table = pq.read_table(path)
    with pq.ParquetWriter(path, table.schema) as writer:  # an empty row group first: nothing lines up any more
        writer.write_table(table.slice(0, 0))
        writer.write_table(table)
    sent, late = index(lake, client)
    assert late == sent == 16
    records, edges = live(client, "records"), live(client, "edges")
    assert set(edges) == table_edges(lake)
    assert all(edges[e].version == records[edges[e].source["src"]].version for e in edges)
