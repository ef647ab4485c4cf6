"""The bulk sink against a real three-node cluster (issue 19): one node is killed in the middle of a bulk
load, and every document still ends up indexed exactly once, at its version, with the sink's memory bounded.

Three genuine Elasticsearch processes (``es_node.cluster.RealCluster``) form one cluster with production
discovery; the month indices get one replica (the shipped templates leave ``number_of_replicas`` at
Elasticsearch's default, 1). The sink's client knows all three URLs. While the producer is part-way
through its stream, the node holding the primary of the index being written is SIGKILLed: requests in
flight to it fail, the client marks it dead, the sink re-sends with backoff to the surviving nodes, and the
cluster promotes the replica. Writes are idempotent under ``external_gte``, so a re-sent document that had
already landed is overwritten with itself, never added twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from crawl_assets.index.naming import index_name, read_alias, observation_version
from crawl_assets.index.sink import BulkSink, MiB
from crawl_assets_tests.es_node.cluster import RealCluster
from crawl_assets_tests.es_node.fixtures import external_url, resource, start_or_skip
from crawl_assets_tests.es_node.inspect import all_docs
from crawl_assets_tests.index.docs import record

TENANT = "cluster"
DOCS = 6000
KILL_AT = 2000  # the producer has handed over this many documents when a node dies
MONTH = 3  # every document in one month index: its primary lives on one node, the one killed


@pytest.fixture(scope="module")
def cluster() -> Iterator[RealCluster]:
    if external_url():
        pytest.skip("CRAWL_TEST_ES_URL names an external cluster; this test kills nodes of its own cluster")
    real = start_or_skip(RealCluster(size=3, heap="384m").start, "cluster")
    try:
        yield real
    finally:
        real.stop()


def primary_node(client: Elasticsearch, index: str) -> str:
    [shard] = [s for s in client.cat.shards(index=index, format="json", h="prirep,node,state") if s["prirep"] == "p"]
    assert shard["state"] == "STARTED", shard
    return shard["node"]


def test_a_node_killed_mid_bulk_loses_and_duplicates_nothing(cluster: RealCluster, tmp_path: Path) -> None:
    docs = [record(i, TENANT, month=MONTH, text=f"متن آزمایشی {i} " * 20) for i in range(DOCS)]
    expected = {}
    index = index_name("records", TENANT, f"2026.{MONTH:02d}")
    batch_bytes, queue_batches, concurrency = 64 * 1024, 2, 2
    killed: list[str] = []

    with resource(cluster.urls[0], hosts=cluster.urls, request_timeout=90).get_client() as client:
        sink = BulkSink(client, family="records", tenant=TENANT, deadletter_root=str(tmp_path / "lake"),
                        run_id="cluster-run", batch_docs=100, batch_bytes=batch_bytes, queue_batches=queue_batches,
                        concurrency=concurrency, backoff_base_s=0.05, backoff_max_s=2.0, max_request_retries=12)

        def stream() -> Iterator[dict]:
            for i, doc in enumerate(docs):
                if i == KILL_AT:
                    victim = primary_node(client, index)  # the index exists: the first document created it
                    cluster.kill(cluster.node_named(victim))
                    killed.append(victim)
                expected[doc["key"]] = observation_version(doc)
                yield doc

        with sink:
            sink.add_many(stream())
        stats = sink.stats

        # The kill happened mid-load and was felt: requests to the dead node failed and were re-sent.
        assert killed and stats.request_retries > 0, stats
        health = cluster.wait_for(nodes=2)
        assert health["number_of_nodes"] == 2 and health["status"] in ("yellow", "green"), health
        survivors = [u for n, u in zip(cluster.nodes, cluster.urls) if n.proc is not None and n.proc.poll() is None]
        assert len(survivors) == 2

        # Every document has exactly one outcome and none failed (nothing dead-lettered).
        assert stats.docs == DOCS and stats.unaccounted == 0, stats
        assert stats.failed == 0 and stats.deadletter_path is None, stats
        assert stats.created + stats.updated + stats.noop == DOCS, stats

        # Memory stayed bounded while the cluster was down a node: the producer waited instead of buffering.
        assert stats.peak_buffered_bytes <= (queue_batches + concurrency + 1) * batch_bytes, stats
        assert stats.producer_waits > 0, stats

    with resource(survivors[0], hosts=survivors).get_client() as client:
        settings = client.indices.get_settings(index=index)[index]["settings"]["index"]
        assert settings["number_of_replicas"] == "1"
        assert primary_node(client, index) != killed[0]  # the replica on a survivor was promoted
        indexed = all_docs(client, read_alias("records", TENANT))  # raises on an _id seen twice
        assert client.count(index=read_alias("records", TENANT))["count"] == DOCS
    assert len(indexed) == DOCS
    by_key = {hit.source["key"]: hit for hit in indexed.values()}
    assert set(by_key) == set(expected)  # nothing lost
    assert {key: hit.version for key, hit in by_key.items()} == expected  # each at its own version
    assert {hit.index for hit in indexed.values()} == {index}
