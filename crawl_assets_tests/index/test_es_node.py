"""The protocol test server speaks like a 9.x node; these checks keep it honest (and run on a real cluster
too where they do not need fault injection)."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import orjson
import pytest
from elastic_transport import ConnectionError as TransportConnectionError
from elasticsearch import BadRequestError, ConflictError, NotFoundError

from crawl_assets.index.bootstrap import ensure_template
from crawl_assets_tests.index.conftest import EsTarget


def raw(es: EsTarget, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    parts = urlsplit(es.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, dict((k.lower(), v) for k, v in resp.getheaders()), data


def test_root_info_and_product_header(es: EsTarget) -> None:
    es.require_server()
    status, headers, body = raw(es, "GET", "/", headers={"Accept": "application/vnd.elasticsearch+json; compatible-with=9"})
    assert status == 200
    assert headers["x-elastic-product"] == "Elasticsearch"
    assert headers["content-type"] == "application/vnd.elasticsearch+json;compatible-with=9"
    info = orjson.loads(body)
    assert info["version"]["number"].startswith("9.") and info["tagline"] == "You Know, for Search"
    assert es.client.info()["version"]["build_flavor"] == "default"


def test_unsupported_compatibility_version_is_refused(es: EsTarget) -> None:
    es.require_server()
    status, _, body = raw(es, "GET", "/", headers={"Accept": "application/vnd.elasticsearch+json; compatible-with=7"})
    assert status == 400 and orjson.loads(body)["error"]["type"] == "media_type_header_exception"


def test_external_and_external_gte_version_semantics(es: EsTarget) -> None:
    ensure_template(es.client, "records")  # mapped fields, as in production
    index = f"crawl-records-{es.tenant}-2026.01"
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
    index = f"crawl-records-{es.tenant}-2026.01"
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
    index = f"crawl-records-{es.tenant}-2026.01"
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
        es.client.count(index=f"crawl-records-{es.tenant}-1999.01")
    assert missing.value.error == "index_not_found_exception"
    es.client.indices.create(index=f"crawl-records-{es.tenant}-1999.02")
    with pytest.raises(BadRequestError) as exists:
        es.client.indices.create(index=f"crawl-records-{es.tenant}-1999.02")
    assert exists.value.error == "resource_already_exists_exception"


def test_dropped_connections_and_injected_errors_reach_the_client(es: EsTarget) -> None:
    server = es.require_server()
    client = es.client.options(max_retries=0)
    server.faults.drop_connections(1, path="/")
    with pytest.raises(TransportConnectionError):
        client.info()
    server.faults.fail_requests(1, status=429, path="_bulk")
    with pytest.raises(Exception) as info:
        client.bulk(operations=[{"index": {"_index": "x", "_id": "1"}}, {"a": 1}])
    assert getattr(info.value, "status_code", None) == 429
    assert client.info()["cluster_name"] == "es-test-server"
