"""The bulk sink against the real Elasticsearch node (or CRAWL_TEST_ES_URL's cluster).

Refusals are real where a document can make the node refuse it (a value its mapping cannot take); 429s,
5xx answers, dropped connections and slow answers come from the fault proxy in front of the node.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from crawl_assets.index.indices import count_documents, tenant_indices
from crawl_assets.index.erasure import erase_documents
from crawl_assets.index.naming import index_name, read_alias, observation_version
from crawl_assets.index.outcomes import pending_files, read_file
from crawl_assets.index.replay import replay_deadletters
from crawl_assets.index.sink import BulkSink, SinkAborted, edge_id, index_documents
from crawl_assets.orchestration.resources import ElasticsearchResource
from crawl_assets_tests.es_node.proxy import spawn
from crawl_assets_tests.index.conftest import EsTarget
from crawl_assets_tests.index.docs import edge, record

FAST = {"backoff_base_s": 0.001, "backoff_max_s": 0.01}


def snapshot(es: EsTarget, family: str = "records") -> dict[str, tuple[str, int, Any]]:
    """``_id -> (index, version, _source)`` of everything in the tenant's alias."""
    resp = es.client.search(index=read_alias(family, es.tenant), size=10_000, version=True,
                            query={"match_all": {}}, ignore_unavailable=True)
    return {h["_id"]: (h["_index"], h["_version"], h["_source"]) for h in resp["hits"]["hits"]}


def run(es: EsTarget, docs: Any, tmp_path: Path, family: str = "records", **tuning: Any):
    return index_documents(es.client, docs, family=family, tenant=es.tenant, deadletter_root=str(tmp_path / "lake"),
                           run_id="test-run", **{**FAST, **tuning})


def test_reindexing_the_same_batch_twice_gives_an_identical_index(es: EsTarget, tmp_path: Path) -> None:
    docs = [record(i, es.tenant, month=1 + i % 3) for i in range(300)]
    first = run(es, docs, tmp_path, batch_docs=40)
    before = snapshot(es)
    second = run(es, docs, tmp_path, batch_docs=40)
    after = snapshot(es)

    assert (first.created, first.updated, first.noop, first.failed) == (300, 0, 0, 0)
    assert second.created == 0 and second.failed == 0 and second.updated + second.noop == 300
    assert after == before
    assert len(after) == 300
    assert count_documents(es.client, es.tenant) == 300
    assert first.bulk_requests >= 300 // 40 and first.latency_p95_ms >= first.latency_p50_ms > 0


def test_an_older_snapshot_never_overwrites_a_newer_edit(es: EsTarget, tmp_path: Path) -> None:
    edit = record(1, es.tenant, text="edited text", edited_at="2026-01-05T12:00:00Z",
                  collected_at="2026-01-06T00:00:00Z")
    # A backfill collected later re-reads the record as it was before the edit.
    backfill = record(1, es.tenant, text="original text", edited_at=None, collected_at="2026-03-01T00:00:00Z")
    refresh = record(1, es.tenant, text="edited text", edited_at="2026-01-05T12:00:00Z",
                     collected_at="2026-02-01T00:00:00Z", metrics={"likes": 99})

    assert run(es, [edit], tmp_path).created == 1
    stale = run(es, [backfill], tmp_path)
    assert (stale.noop, stale.updated, stale.failed) == (1, 0, 0)
    assert snapshot(es)["x:1001"][2]["text"] == "edited text"

    # Same edit, collected later: the newer counters win.
    assert run(es, [refresh], tmp_path).updated == 1
    assert snapshot(es)["x:1001"][2]["metrics"]["likes"] == 99


def test_deletions_are_tombstones_that_win_and_are_not_counted_by_default(es: EsTarget, tmp_path: Path) -> None:
    docs = [record(i, es.tenant) for i in range(5)]
    run(es, docs, tmp_path)
    gone = record(2, es.tenant, deleted=True, deleted_at="2026-05-01T00:00:00Z", collected_at="2026-05-01T01:00:00Z")
    run(es, [gone], tmp_path)
    run(es, [record(2, es.tenant, collected_at="2026-04-01T00:00:00Z")], tmp_path)  # older snapshot: stays deleted

    assert snapshot(es)["x:1002"][2]["deleted"] is True
    assert count_documents(es.client, es.tenant) == 4
    assert count_documents(es.client, es.tenant, include_tombstones=True) == 5
    assert count_documents(es.client, es.tenant, source="s1") == 4
    assert count_documents(es.client, es.tenant, source="other") == 0


def test_month_routing_and_read_aliases_per_tenant(es: EsTarget, tmp_path: Path) -> None:
    other = es.tenant + "-b"
    mine = [record(i, es.tenant, month=m, year=2025) for i, m in enumerate([1, 1, 2, 12])]
    theirs = [record(i, other, month=7, year=2025) for i in range(3)]
    try:
        run(es, mine, tmp_path)
        index_documents(es.client, theirs, family="records", tenant=other, deadletter_root=str(tmp_path / "lake"))

        snap = snapshot(es)
        assert {v[0] for v in snap.values()} == {index_name("records", es.tenant, m)
                                                for m in ("2025.01", "2025.02", "2025.12")}
        assert snap["x:1003"][0] == index_name("records", es.tenant, "2025.12")
        mine_aliases = tenant_indices(es.client, "records", es.tenant)
        theirs_aliases = tenant_indices(es.client, "records", other)
        assert set(mine_aliases) == {v[0] for v in snap.values()}
        assert set(theirs_aliases) == {index_name("records", other, "2025.07")}
        assert all(set(a) == {"crawl-records", read_alias("records", es.tenant)} for a in mine_aliases.values())
        assert all(set(a) == {"crawl-records", read_alias("records", other)} for a in theirs_aliases.values())
        assert count_documents(es.client, es.tenant) == 4
        assert count_documents(es.client, other) == 3
        assert count_documents(es.client, "nobody-here") == 0
    finally:
        es.client.indices.delete(index=index_name("records", other, "2025.07"), ignore_unavailable=True)


def test_routing_uses_the_utc_month_whatever_the_offset(es: EsTarget, tmp_path: Path) -> None:
    tehran = record(1, es.tenant, created_at="2026-01-01T01:00:00+03:30")   # 2025-12-31T21:30Z
    utc = record(2, es.tenant, created_at="2026-01-01T00:00:00Z")
    run(es, [tehran, utc], tmp_path)
    snap = snapshot(es)
    assert snap["x:1001"][0] == index_name("records", es.tenant, "2025.12")
    assert snap["x:1002"][0] == index_name("records", es.tenant, "2026.01")


def test_a_document_of_another_tenant_is_dead_lettered_not_mixed_in(es: EsTarget, tmp_path: Path) -> None:
    stats = run(es, [record(1, es.tenant), record(2, "someone-else")], tmp_path)
    assert (stats.created, stats.failed) == (1, 1)
    letters = read_file(str(tmp_path / "lake"), pending_files(str(tmp_path / "lake"))[0]).letters
    assert letters[0].reason["type"] == "tenant_mismatch" and letters[0].doc["key"] == "x:1002"


def test_mapping_failures_are_dead_lettered_and_everything_is_accounted(es: EsTarget, tmp_path: Path) -> None:
    """Real mapping errors (a node refuses them too) plus a record the sink cannot route."""
    docs = [record(i, es.tenant, month=1 + i % 2) for i in range(200)]
    for i in range(0, 200, 20):
        docs[i]["edited_at"] = "yesterday-ish"           # not a date: the cluster refuses it
    docs[7]["created_at"] = None                          # cannot be routed to a month: refused by the sink
    stats = run(es, docs, tmp_path, batch_docs=30)

    assert stats.unaccounted == 0
    assert (stats.created, stats.failed) == (189, 11)
    assert count_documents(es.client, es.tenant) == 189
    letters = read_file(str(tmp_path / "lake"), stats.deadletter_path).letters  # type: ignore[arg-type]
    assert sorted(letter.doc["key"] for letter in letters) == sorted(
        [f"x:{1000 + i}" for i in range(0, 200, 20)] + ["x:1007"])
    assert all(letter.reason["type"] for letter in letters)
    by_key = {letter.doc["key"]: letter for letter in letters}
    assert by_key["x:1007"].reason["type"] == "invalid_document"
    assert by_key["x:1020"].reason["status"] == 400


def test_retried_bulk_with_partial_failures_accounts_for_every_document(es: EsTarget, tmp_path: Path) -> None:
    proxy, client = es.proxied()
    docs = [record(i, es.tenant, month=1 + i % 3) for i in range(500)]
    proxy.faults.reject_items([f"x:{1000 + i}" for i in range(0, 500, 10)], times=2)  # 50 retried twice
    for i in range(3, 500, 50):                                                      # 10 refused for good
        docs[i]["metrics"]["likes"] = "a lot"                                         # (by the node's mapping)
    proxy.faults.fail_requests(2, status=503)                                         # whole requests fail
    proxy.faults.drop_connections(2, after_apply=True)                                # responses lost
    stats = index_documents(client, docs, family="records", tenant=es.tenant, deadletter_root=str(tmp_path / "lake"),
                            batch_docs=50, concurrency=3, **FAST)

    assert stats.unaccounted == 0
    assert stats.failed == 10
    assert stats.created + stats.updated + stats.noop == 490
    assert stats.request_retries == 4 and stats.retried >= 100
    assert proxy.stats["dropped"] == 2 and proxy.stats["injected 503"] == 2 and proxy.faults.pending() == []
    assert len(snapshot(es)) == 490
    letters = read_file(str(tmp_path / "lake"), stats.deadletter_path).letters  # type: ignore[arg-type]
    assert {letter.reason["type"] for letter in letters} == {"document_parsing_exception"}
    assert {letter.reason["status"] for letter in letters} == {400}
    assert len(letters) == 10


def test_429_storm_completes_with_backoff(es: EsTarget, tmp_path: Path) -> None:
    proxy, client = es.proxied()
    docs = [record(i, es.tenant) for i in range(400)]
    proxy.faults.fail_requests(8, status=429)
    proxy.faults.reject_items([d["key"] for d in docs], times=3)
    stats = index_documents(client, docs, family="records", tenant=es.tenant, deadletter_root=str(tmp_path / "lake"),
                            batch_docs=100, concurrency=2, max_item_retries=5, max_request_retries=10, **FAST)

    assert (stats.created, stats.failed, stats.unaccounted) == (400, 0, 0)
    assert stats.request_retries == 8
    assert stats.retried >= 400 * 3 and proxy.faults.pending() == []
    assert count_documents(es.client, es.tenant) == 400


def test_a_server_before_8_18_refusing_include_source_on_error_loses_nothing(es: EsTarget, tmp_path: Path) -> None:
    """Servers before 8.18 refuse the parameter (checked on a real 8.14.3 node, whose answer the proxy
    gives): the sink drops it and re-sends, every worker alike (several meet the refusal at once)."""
    proxy, client = es.proxied()
    proxy.faults.refuse_parameter("include_source_on_error")
    docs = [record(i, es.tenant, month=1 + i % 3) for i in range(300)]
    stats = index_documents(client, docs, family="records", tenant=es.tenant, deadletter_root=str(tmp_path / "lake"),
                            batch_docs=20, concurrency=4, **FAST)
    assert (stats.created, stats.failed, stats.request_retries) == (300, 0, 0)
    assert proxy.stats["unknown parameter"] >= 1


def test_items_still_rejected_after_the_retry_budget_are_dead_lettered(es: EsTarget, tmp_path: Path) -> None:
    proxy, client = es.proxied()
    proxy.faults.reject_items(["x:1001"], times=100)
    stats = index_documents(client, [record(i, es.tenant) for i in range(3)], family="records", tenant=es.tenant,
                            deadletter_root=str(tmp_path / "lake"), max_item_retries=2, **FAST)
    assert (stats.created, stats.failed) == (2, 1)
    letter = read_file(str(tmp_path / "lake"), stats.deadletter_path).letters[0]  # type: ignore[arg-type]
    assert letter.reason["type"] == "es_rejected_execution_exception"


def test_a_refused_document_is_dead_lettered_with_its_id_index_version_and_exact_source(
        es: EsTarget, tmp_path: Path) -> None:
    """The sink keeps each document as its prepared bulk lines: the letter is read back from them."""
    doc = record(5, es.tenant, month=3, key='x:"quoted"\n\u00e9', text="خط اول\nخط دوم",
                 edited_at="2026-03-09T08:00:00Z", collected_at="2026-03-10T00:00:00Z")
    doc["metrics"]["views"] = "many"  # a long field: the node refuses the document
    stats = run(es, [record(1, es.tenant), doc], tmp_path)
    assert (stats.created, stats.failed) == (1, 1)
    [line] = Path(stats.deadletter_path).read_bytes().splitlines()  # type: ignore[arg-type]
    letter = orjson.loads(line)
    assert letter["id"] == doc["key"]
    assert letter["index"] == index_name("records", es.tenant, "2026.03")
    assert letter["version"] == observation_version(doc)
    assert letter["doc"] == doc
    assert letter["reason"]["type"] == "document_parsing_exception" and "metrics.views" in letter["reason"]["reason"]


def test_a_slow_cluster_blocks_the_producer_and_memory_stays_bounded(es: EsTarget, tmp_path: Path) -> None:
    batch_bytes, queue_batches, concurrency = 64 * 1024, 2, 2
    big = "متن " * 600  # ~4.8 KB of text per record
    produced = 0

    def stream():
        nonlocal produced
        for i in range(1500):
            doc = record(i, es.tenant, month=1 + i % 2, text=big)
            produced += len(orjson.dumps(doc))
            yield doc

    # A proxy in its own process answers every bulk 30 ms late: only the client is traced here.
    with spawn(es.url, "--slow", "0.03") as url, ElasticsearchResource(hosts=[url]).get_client() as client:
        tracemalloc.start()
        try:
            sink = BulkSink(client, family="records", tenant=es.tenant, deadletter_root=str(tmp_path / "lake"),
                            batch_bytes=batch_bytes, queue_batches=queue_batches, concurrency=concurrency, **FAST)
            with sink:
                sink.add_many(stream())
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()

    stats = sink.stats
    assert stats.created == 1500
    bound = (queue_batches + concurrency + 1) * batch_bytes
    assert stats.peak_buffered_bytes <= bound
    assert stats.producer_waits > 0          # the producer was made to wait instead of buffering
    assert produced > 10 * bound             # the stream was far larger than what the sink may hold...
    assert peak < produced / 2               # ...and the process never held a large part of it


def test_edges_get_deterministic_ids_and_undated_edges_are_kept(es: EsTarget, tmp_path: Path) -> None:
    edges = [edge(i, es.tenant) for i in range(5)] + [edge(9, es.tenant, created_at=None, type_="mention")]
    first = run(es, edges, tmp_path, family="edges")
    second = run(es, edges, tmp_path, family="edges")
    snap = snapshot(es, "edges")

    assert first.created == 6 and second.created == 0 and second.failed == 0
    assert set(snap) == {edge_id(e) for e in edges}
    assert snap[edge_id(edges[-1])][0] == index_name("edges", es.tenant, None)
    assert edge_id(edges[0]) == edge_id(dict(edges[0]))
    assert edge_id(edges[0]) != edge_id({**edges[0], "type": "quote"})


def test_replay_after_the_cause_is_fixed_indexes_the_dead_letters(es: EsTarget, tmp_path: Path) -> None:
    lake = str(tmp_path / "lake")
    docs = [record(i, es.tenant) for i in range(50)]
    deep: dict = {"leaf": 1}
    for level in range(24):
        deep = {f"l{level}": deep}
    for doc in docs[:5]:
        doc["metadata"] = deep  # deeper than the template's flattened depth_limit (20): the node refuses it
    first = run(es, docs, tmp_path)
    assert first.failed == 5 and len(pending_files(lake)) == 1
    letters = read_file(lake, pending_files(lake)[0]).letters
    assert all("[metadata] of type [flattened]" in letter.reason["reason"] for letter in letters), letters[0].reason

    # The fix: a deeper limit (an updatable mapping parameter) on the tenant's indices.
    es.client.indices.put_mapping(index=read_alias("records", es.tenant),
                                  properties={"metadata": {"type": "flattened", "depth_limit": 30}})
    report = replay_deadletters(es.client, lake, **FAST)

    assert report.replayed == 5 and report.still_failed == 0
    assert pending_files(lake) == []
    assert report.files[0].moved_to and "deadletter/es-replayed/records/" in report.files[0].moved_to
    assert count_documents(es.client, es.tenant) == 50


def test_replay_that_fails_again_keeps_every_document(es: EsTarget, tmp_path: Path) -> None:
    lake = str(tmp_path / "lake")
    docs = [record(i, es.tenant) for i in range(10)]
    docs[3]["edited_at"] = "not a date"
    run(es, docs, tmp_path)
    (original,) = pending_files(lake)

    report = replay_deadletters(es.client, lake, **FAST)

    assert report.replayed == 1 and report.still_failed == 1
    (again,) = pending_files(lake)
    assert again != original
    assert read_file(lake, again).letters[0].doc["key"] == "x:1003"


def test_a_corrupt_dead_letter_line_is_reported_and_its_file_kept(es: EsTarget, tmp_path: Path) -> None:
    lake = str(tmp_path / "lake")
    proxy, client = es.proxied()
    proxy.faults.refuse_items(["x:1000"])
    index_documents(client, [record(0, es.tenant)], family="records", tenant=es.tenant, deadletter_root=lake, **FAST)
    (path,) = pending_files(lake)
    with open(path, "ab") as fh:
        fh.write(b"{not json\n")

    report = replay_deadletters(es.client, lake, **FAST)

    (bad,) = report.bad_lines
    assert str(bad).startswith(f"{path}:2: unreadable dead letter: ")
    assert report.replayed == 1 and pending_files(lake) == [path]


def test_erasure_is_the_only_hard_delete(es: EsTarget, tmp_path: Path) -> None:
    run(es, [record(i, es.tenant, month=1 + i % 3) for i in range(6)], tmp_path)
    assert erase_documents(es.client, es.tenant, ["x:1000", "x:1004", "x:9999"]) == 2
    assert sorted(snapshot(es)) == ["x:1001", "x:1002", "x:1003", "x:1005"]
    assert count_documents(es.client, es.tenant, include_tombstones=True) == 4
    assert erase_documents(es.client, "nobody-here", ["x:1"]) == 0


def test_odd_documents_are_indexed_or_dead_lettered_never_lost(es: EsTarget, tmp_path: Path) -> None:
    int_keys = record(1, es.tenant, metadata={1: "non-string key"}, metrics={"likes": np.int64(7)})
    unserializable = record(2, es.tenant, metadata={"s": {1, 2}})
    no_key = record(3, es.tenant, key=None)
    stats = run(es, [int_keys, unserializable, no_key], tmp_path)
    assert (stats.created, stats.failed, stats.unaccounted) == (1, 2, 0)
    assert snapshot(es)["x:1001"][2]["metadata"] == {"1": "non-string key"}
    assert snapshot(es)["x:1001"][2]["metrics"] == {"likes": 7}
    reasons = sorted(letter.reason["reason"] for letter in read_file(str(tmp_path / "lake"),
                                                                     stats.deadletter_path).letters)
    assert any("key" in r for r in reasons) and any("serializ" in r or "Type" in r for r in reasons)


def test_broken_dead_letter_storage_fails_loudly_without_losing_count(es: EsTarget, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the lake should be")
    sink = BulkSink(es.client, family="records", tenant=es.tenant, deadletter_root=str(blocker), **FAST)
    docs = [record(i, es.tenant) for i in range(3)]
    docs[1]["created_at"] = "2026-01-02T10:00:00Z"
    docs[1]["deleted_at"] = "in a while"  # not a date: refused by the node
    sink.add_many(docs)
    with pytest.raises(RuntimeError, match="dead letters could not be written"):
        sink.close()
    assert (sink.stats.created, sink.stats.failed, sink.stats.unaccounted) == (2, 1, 0)


def test_too_many_failures_stop_the_producer_with_everything_accounted(es: EsTarget, tmp_path: Path) -> None:
    docs = [record(i, es.tenant, edited_at="never") for i in range(2000)]  # the cluster refuses them all
    sink = BulkSink(es.client, family="records", tenant=es.tenant, deadletter_root=str(tmp_path / "lake"),
                    batch_docs=100, max_failures=150, **FAST)
    with pytest.raises(SinkAborted, match="max_failures=150"):
        with sink:
            sink.add_many(docs)
    assert sink.stats.docs < 2000
    assert sink.stats.failed == sink.stats.docs and sink.stats.unaccounted == 0
