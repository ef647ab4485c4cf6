"""What the product relies on in Elasticsearch itself, checked on the real node: REST compatibility (why
the client is 8.x), external versioning, per-item bulk outcomes, error bodies; and the test proxy's
transparency and faults."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import orjson
import pytest
from elastic_transport import ConnectionError as TransportConnectionError
from elasticsearch import BadRequestError, ConflictError, NotFoundError

from crawl_assets.index.indices import ensure_template
from crawl_assets_tests.index.conftest import EsTarget


def raw(es: EsTarget, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    parts = urlsplit(es.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, dict((k.lower(), v) for k, v in resp.getheaders()), data


def test_an_8x_client_is_what_8x_and_9x_servers_both_accept(es: EsTarget) -> None:
    """REST compatibility decides the client pin: a node answers compatible-with=8 (what the 8.x client
    sends), and an 8.x node refuses compatible-with=9 (what every 9.x client sends)."""
    import elasticsearch

    assert elasticsearch.__versionstr__.startswith("8."), "the shipped client must be 8.x (see pyproject)"
    health = "/_cluster/health"
    status, headers, body = raw(es, "GET", health, headers={"Accept": "application/vnd.elasticsearch+json; compatible-with=8"})
    assert status == 200 and headers["x-elastic-product"] == "Elasticsearch"
    assert headers["content-type"].replace(" ", "") == "application/vnd.elasticsearch+json;compatible-with=8"
    major = es.client.nodes.info(node_id="_local", metric="_none", filter_path="nodes.*.version")
    version = next(iter(major["nodes"].values()))["version"]
    status, _, body = raw(es, "GET", health, headers={"Accept": "application/vnd.elasticsearch+json; compatible-with=9"})
    if version.startswith("8."):
        assert status == 400 and b"media_type_header_exception" in body
    else:
        assert status == 200
    status, _, body = raw(es, "GET", health, headers={"Accept": "application/vnd.elasticsearch+json; compatible-with=6"})
    assert status == 400 and orjson.loads(body)["error"]["type"] == "media_type_header_exception"


def test_external_and_external_gte_version_semantics(es: EsTarget) -> None:
    ensure_template(es.client, "records")  # mapped fields, as in production
    index = f"crawl-records-{es.tenant}.2026.01"
    es.client.index(index=index, id="a", document={"x": 1}, version=5, version_type="external")
    with pytest.raises(ConflictError) as info:
        es.client.index(index=index, id="a", document={"x": 2}, version=5, version_type="external")
    assert info.value.error == "version_conflict_engine_exception"
    es.client.index(index=index, id="a", document={"x": 3}, version=5, version_type="external_gte")
    with pytest.raises(ConflictError):
        es.client.index(index=index, id="a", document={"x": 4}, version=4, version_type="external_gte")
    doc = es.client.get(index=index, id="a")
    assert (doc["_version"], doc["_source"]) == (5, {"x": 3})


def test_bulk_items_report_per_item_outcomes(es: EsTarget) -> None:
    ensure_template(es.client, "records")  # mapped fields, as in production
    index = f"crawl-records-{es.tenant}.2026.01"
    ops = [{"index": {"_index": index, "_id": "1", "version": 2, "version_type": "external_gte"}}, {"a": 1},
           {"index": {"_index": index, "_id": "1", "version": 1, "version_type": "external_gte"}}, {"a": 2},
           {"create": {"_index": index, "_id": "2"}}, {"a": 3},
           {"create": {"_index": index, "_id": "2"}}, {"a": 4}]
    resp = es.client.bulk(operations=ops, refresh=True)
    statuses = [next(iter(i.values()))["status"] for i in resp["items"]]
    assert resp["errors"] is True and statuses == [201, 409, 201, 409]
    conflict = resp["items"][1]["index"]["error"]
    assert conflict["type"] == "version_conflict_engine_exception" and "current version [2]" in conflict["reason"]


def test_queries_and_aggregations_the_tests_use(es: EsTarget) -> None:
    ensure_template(es.client, "records")  # mapped fields, as in production
    index = f"crawl-records-{es.tenant}.2026.01"
    for i in range(6):
        es.client.index(index=index, id=str(i), document={
            "tenant": es.tenant, "lang": "fa" if i % 2 else "en", "hashtags": ["a", f"h{i % 3}"],
            "created_at": f"2026-01-0{i + 1}T00:00:00Z", "deleted": i == 5})
    es.client.indices.refresh(index=index)
    q = {"bool": {"filter": [{"terms": {"lang": ["fa"]}}, {"range": {"created_at": {"gte": "2026-01-03T00:00:00Z"}}}],
                  "must_not": [{"term": {"deleted": True}}]}}
    assert es.client.count(index=index, query=q)["count"] == 1
    resp = es.client.search(index=index, size=0, aggs={"tags": {"terms": {"field": "hashtags", "size": 2}}})
    assert resp["hits"]["total"]["value"] == 6
    assert resp["aggregations"]["tags"]["buckets"][0] == {"key": "a", "doc_count": 6}


def test_errors_have_real_bodies(es: EsTarget) -> None:
    with pytest.raises(NotFoundError) as missing:
        es.client.count(index=f"crawl-records-{es.tenant}.1999.01")
    assert missing.value.error == "index_not_found_exception"
    es.client.indices.create(index=f"crawl-records-{es.tenant}.1999.02")
    with pytest.raises(BadRequestError) as exists:
        es.client.indices.create(index=f"crawl-records-{es.tenant}.1999.02")
    assert exists.value.error == "resource_already_exists_exception"


def test_the_fault_proxy_is_transparent_and_its_faults_reach_the_client(es: EsTarget) -> None:
    proxy, client = es.proxied(max_retries=0)
    assert client.cluster.health()["status"] in ("green", "yellow")  # product check passed through the proxy
    proxy.faults.drop_connections(1, path="_cluster/health")
    with pytest.raises(TransportConnectionError):
        client.cluster.health()
    proxy.faults.fail_requests(1, status=429, path="_bulk")
    with pytest.raises(Exception) as info:
        client.bulk(operations=[{"index": {"_index": f"crawl-records-{es.tenant}-2026.01", "_id": "1"}}, {"a": 1}])
    assert getattr(info.value, "status_code", None) == 429
    ensure_template(es.client, "records")
    index = f"crawl-records-{es.tenant}-2026.01"
    proxy.faults.reject_items(["b"], times=1)
    ops = [{"index": {"_index": index, "_id": i}} for i in "abc"]
    resp = client.bulk(operations=[x for op in ops for x in (op, {"lang": "fa"})], refresh=True)
    assert [next(iter(i.values()))["status"] for i in resp["items"]] == [201, 429, 201]
    assert sorted(h["_id"] for h in es.client.search(index=index)["hits"]["hits"]) == ["a", "c"], \
        "a rejected item is not applied"
    assert proxy.stats["dropped"] == 1 and proxy.stats["injected 429"] == 1 and proxy.faults.pending() == []
