"""Topics and entities on the real node: joined to their records by key, through the enrich joins and the API
(topics list, records by topic, topic timeline, the ``entity=`` filter on every read); another tenant sees
nothing; an erasure removes the subject's documents and leaves the topics' ids."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from crawl_assets.enrich import search
from crawl_assets.enrich.entities import Entities
from crawl_assets.enrich.index import index_features
from crawl_assets.enrich.run import enrich_source, read_tenant_table
from crawl_assets.enrich.topics import Topics
from crawl_assets.index.erasure import erase_feature_documents
from crawl_assets.index.sink import index_documents
from crawl_assets.lake import Lake
from crawl_assets_tests.enrich.planted import topic_records
from crawl_assets_tests.enrich.records import batch_id, record, write_part
from crawl_assets_tests.index.conftest import EsTarget

NOW = datetime(2026, 4, 1, tzinfo=timezone.utc)
MENTIONS = {"x:e1": "Power cut in Tehran again, the United Nations office too",
            "x:e2": "قطعی برق در تهران و مشهد ادامه دارد",
            "x:e3": "Dr. Sarah Connor landed in Cairo"}


def _world(es: EsTarget, tmp_path, tenant: str | None = None):
    tenant = tenant or es.tenant
    src = f"{tenant}.x.main"
    lake = Lake(str(tmp_path / f"lake-{tenant}"))
    rows, truth = topic_records(20, tenant=tenant)
    rows += [record(k, text, tenant=tenant, source=src, author="reporter") for k, text in MENTIONS.items()]
    write_part(lake, rows, batch_id(1), tenant=tenant, source=src)
    index_documents(es.client, rows, family="records", tenant=tenant, deadletter_root=str(tmp_path / "dl"))
    enrichers = [Topics(topics=9), Entities()]
    for enricher in enrichers:
        enrich_source(lake, enricher, tenant, "x", src, now=NOW)
        assert index_features(es.client, lake, enricher, tenant, "x", src).accounted
    es.client.indices.refresh(index="crawl-*")
    return lake, rows, truth


def test_topics_and_entities_join_their_records(es: EsTarget, tmp_path):
    lake, rows, truth = _world(es, tmp_path)
    topics = search.topics(es.client, es.tenant)
    assert len(topics) == 9 and all(t["label"] and t["enricher_version"].startswith("topics/1+") for t in topics)
    assignments = read_tenant_table(lake, Topics(topics=9), es.tenant, "assignments")
    counts = Counter(i for ids in assignments.column("topic_ids").to_pylist() for i in ids)
    biggest = topics[0]
    assert biggest["records"] == counts[biggest["topic_id"]] == max(counts.values())
    found = search.topic_records(es.client, es.tenant, biggest["topic_id"], size=500)
    assert len(found) == biggest["records"] and all(biggest["topic_id"] in r["topics"]["ids"] for r in found)
    planted_of = {x["key"]: name for x, name in zip(rows, truth)}
    primary = [planted_of[r["key"]] for r in found if r["topics"]["topic_id"] == biggest["topic_id"]]
    assert Counter(primary).most_common(1)[0][1] >= 0.9 * len(primary), "its records are one planted topic"
    assert [r["created_at"] for r in found] == sorted((r["created_at"] for r in found), reverse=True)
    timeline = search.topic_timeline(es.client, es.tenant, biggest["topic_id"], interval="day")
    assert sum(b["count"] for b in timeline) == biggest["records"] and timeline[0]["count"] > 0

    def keys(*values):
        return sorted(search.entity_keys(es.client.search(**search.entity_keys_search(es.tenant, list(values))).body))

    assert keys("Tehran") == keys("تهران") == keys("loc:tehran") == ["x:e1", "x:e2"]
    assert keys("sarah connor") == keys("per:sarah_connor") == ["x:e3"]
    assert keys("Mashhad", "Cairo") == ["x:e2", "x:e3"]
    [doc] = search.records_with_entity(es.client, es.tenant, ["org:un"])
    assert doc["record_key"] == "x:e1" and doc["entities"]["spans"][1]["text"] == "United Nations"
    other = f"{es.tenant}b"
    assert search.topics(es.client, other) == [] and search.topic_records(es.client, other, 1) == []
    assert search.entity_keys(es.client.search(**search.entity_keys_search(other, ["Tehran"])).body) == []


@pytest.fixture
def api(es: EsTarget, tmp_path):
    from crawl_assets.api.app import create_app
    from crawl_assets.api.access import KeyStore

    store = KeyStore(f"sqlite:///{tmp_path / 'keys.db'}")
    keys = {t: store.create(t, "test")[1] for t in (es.tenant, f"{es.tenant}b")}
    with TestClient(create_app(es.client, store), raise_server_exceptions=False) as client:
        yield client, keys
    store.close()


def test_the_api_walks_topics_and_filters_by_entity(es: EsTarget, tmp_path, api):
    client, keys = api
    _world(es, tmp_path)

    def get(path, tenant=es.tenant, expect=200, **params):
        resp = client.get(path, params=params, headers={"Authorization": f"Bearer {keys[tenant]}"})
        assert resp.status_code == expect, resp.text
        return resp.json()

    listed = get("/v1/topics")
    assert len(listed["topics"]) == 9 and listed["inferred"].startswith("inferred")
    first = listed["topics"][0]
    page = get(f"/v1/topics/{first['topic_id']}/records", size=5)
    assert page["topic"] == first and len(page["records"]) == 5
    assert all(first["topic_id"] in r["topics"]["ids"] and r["text"] for r in page["records"])
    timeline = get(f"/v1/topics/{first['topic_id']}/timeline", interval="week", tz="Asia/Tehran")
    assert sum(b["count"] for b in timeline["buckets"]) == first["records"] and timeline["time_zone"] == "Asia/Tehran"
    get("/v1/topics/999/records", expect=404)
    assert "topic_id" in get("/v1/topics/0/timeline", expect=400)["message"]

    found = get("/v1/search", entity="تهران", sort="oldest")
    assert sorted(r["key"] for r in found["records"]) == ["x:e1", "x:e2"]
    assert [r["key"] for r in get("/v1/search", entity="loc:tehran", q="برق")["records"]] == ["x:e2"]
    counts = get("/v1/aggregations/counts", entity="per:sarah_connor")
    assert counts["live"] == 1, counts
    assert get("/v1/search", entity="Nowhere City")["records"] == []
    assert get("/v1/topics", tenant=f"{es.tenant}b")["topics"] == []
    assert get("/v1/search", tenant=f"{es.tenant}b", entity="Tehran")["records"] == []


def test_an_erasure_removes_the_subjects_topic_and_entity_documents(es: EsTarget, tmp_path):
    _world(es, tmp_path)
    deleted = erase_feature_documents(es.client, es.tenant, {"x:e1", "x:e2"})
    es.client.indices.refresh(index="crawl-*")
    assert deleted >= 9 + 2  # the topic documents (rebuilt by the next run), and both records' entities
    assert search.topics(es.client, es.tenant) == []
    assert search.records_with_entity(es.client, es.tenant, ["Tehran"]) == []
    assert [d["record_key"] for d in search.records_with_entity(es.client, es.tenant, ["Cairo"])] == ["x:e3"]
    assert search.record_features(es.client, es.tenant, "x:e1") == {}


def test_retention_removes_expired_records_topics_and_entities(es: EsTarget, tmp_path):
    from crawl_assets.lake import layout
    from crawl_assets.retention.enforce import enforce
    from crawl_assets.retention.policy import RetentionPolicy, TenantRetention
    from crawl_assets_tests.es_node.inspect import all_docs

    src = f"{es.tenant}.x.main"
    lake = Lake(str(tmp_path / "lake"))
    rows, _ = topic_records(12, tenant=es.tenant)
    old = rows[:50] + [record(k, text, tenant=es.tenant, source=src) for k, text in MENTIONS.items()]
    old_batch = "20250101T000000000000Z-test-0001"
    write_part(lake, old, old_batch, tenant=es.tenant, source=src)
    write_part(lake, rows[50:], "20260330T000000000000Z-test-0002", tenant=es.tenant, source=src)
    (Path(lake.root) / layout.source_dir(layout.RAW, es.tenant, "x", src)).mkdir(parents=True)  # a collected source
    enrichers = [Topics(topics=9), Entities()]

    def run():
        out = {}
        for enricher in enrichers:
            result = enrich_source(lake, enricher, es.tenant, "x", src, now=NOW)
            out[enricher.name] = (result, index_features(es.client, lake, enricher, es.tenant, "x", src,
                                                         removed_keys=result.removed_keys))
        es.client.indices.refresh(index="crawl-*")
        return out

    run()
    docs = set(all_docs(es.client, f"crawl-features-{es.tenant}"))
    assert {"entities:x:e1", "topics:x:0"} <= docs
    policy = RetentionPolicy(tenants={es.tenant: TenantRetention(normalized_days=30)})
    assert enforce(lake, None, policy, NOW).parts_deleted == 1
    after = run()
    assert after["entities"][0].parts_removed == 1 and after["topics"][0].parts_removed == 1
    expired = {r["key"] for r in old}
    assignments = read_tenant_table(lake, enrichers[0], es.tenant, "assignments")
    assert not expired & set(assignments.column("key").to_pylist()) and assignments.num_rows == len(rows) - 50
    docs = set(all_docs(es.client, f"crawl-features-{es.tenant}"))
    assert not {d for d in docs if d.split(":", 1)[1] in expired}, "no feature document of an expired record"
    assert f"topics:{rows[60]['key']}" in docs
