"""The sink's large loads on the real node: refresh off while loading, versions kept through replay."""

from __future__ import annotations

from pathlib import Path

from crawl_assets.index.indices import count_documents, restore_refresh
from crawl_assets.index.naming import index_name, read_alias
from crawl_assets.index.replay import replay_deadletters
from crawl_assets.index.sink import BulkSink, SendPool, close_together, edge_id
from crawl_assets_tests.es_node.inspect import all_docs
from crawl_assets_tests.index.conftest import EsTarget
from crawl_assets_tests.index.docs import edge, record

FAST = {"backoff_base_s": 0.001, "backoff_max_s": 0.01}


def test_a_relaxed_load_turns_refresh_off_while_it_writes_and_back_on_at_close(es: EsTarget, tmp_path: Path) -> None:
    name = index_name("records", es.tenant, "2026.01")

    def refresh_interval() -> str | None:
        found = es.client.indices.get_settings(index=name, name="index.refresh_interval", flat_settings=True)
        return found[name]["settings"].get("index.refresh_interval")

    seen = []

    def docs():
        for i in range(30):
            if i == 20:
                seen.append(refresh_interval())  # the first batch has gone: the index exists
            yield record(i, es.tenant)

    with BulkSink(es.client, family="records", tenant=es.tenant, deadletter_root=str(tmp_path), batch_docs=10,
                  relax_refresh=True) as sink:
        sink.add_many(docs())
    assert seen == ["-1"] and refresh_interval() == "5s", "the template's interval again"
    assert count_documents(es.client, es.tenant) == 30, "and every write is visible"

    # A load that died with refresh off: the next index step's start turns it back on.
    es.client.indices.put_settings(index=name, settings={"index": {"refresh_interval": "-1"}})
    assert restore_refresh(es.client, es.tenant) == [name] and refresh_interval() == "5s"
    assert restore_refresh(es.client, es.tenant) == []


def test_replay_sends_a_document_with_the_version_it_was_first_sent_with(es: EsTarget, tmp_path: Path) -> None:
    """An edge document carries no times of its record: its version is only in the action line and the dead
    letter, and a replay must send that one, not one made up from the document."""
    lake = str(tmp_path / "lake")
    proxy, client = es.proxied()
    doc = edge(1, es.tenant)
    proxy.faults.refuse_items([edge_id(doc)])
    with BulkSink(client, family="edges", tenant=es.tenant, deadletter_root=lake, **FAST) as sink:
        sink.add(doc, 123_456_789)
    assert sink.stats.failed == 1
    proxy.faults.clear()

    report = replay_deadletters(es.client, lake, **FAST)

    assert report.replayed == 1 and report.still_failed == 0
    assert all_docs(es.client, read_alias("edges", es.tenant))[edge_id(doc)].version == 123_456_789


def test_two_families_share_one_pool_and_close_together_with_every_write_visible(es: EsTarget, tmp_path: Path) -> None:
    pool = SendPool(concurrency=2, queue_batches=1)
    batch_bytes = 4 * 1024
    common = {"tenant": es.tenant, "deadletter_root": str(tmp_path), "batch_bytes": batch_bytes, "pool": pool,
              "relax_refresh": True, **FAST}
    records = BulkSink(es.client, family="records", **common)
    edges = BulkSink(es.client, family="edges", **common)
    for i in range(120):
        records.add(record(i, es.tenant, month=1 + i % 2))
        edges.add(edge(i, es.tenant))
    close_together([records, edges])

    for stats in (records.stats, edges.stats):
        assert (stats.created, stats.failed, stats.unaccounted) == (120, 0, 0)
        assert stats.bulk_requests > 1, "bodies of a few KiB: several requests per family"
        assert stats.peak_buffered_bytes <= (1 + 2 + 1) * batch_bytes, "the pool's bound, for both families"
    # one refresh at the end, with refresh back on: both families' writes are visible at once
    assert count_documents(es.client, es.tenant) == 120
    assert count_documents(es.client, es.tenant, family="edges") == 120
    intervals = es.client.indices.get_settings(index=",".join(records.stats.indices + edges.stats.indices),
                                               name="index.refresh_interval", flat_settings=True)
    assert {v["settings"].get("index.refresh_interval") for v in intervals.values()} == {"5s"}
    assert not any(t.is_alive() for t in pool._workers), "the last sink to leave stops the pool's workers"
