"""The shipped Kibana saved objects import cleanly: valid NDJSON, every reference resolves, fields exist."""

from __future__ import annotations

import json
from importlib import resources

from crawl_assets.index.indices import load_template


def test_saved_objects_reference_each_other_and_mapped_fields() -> None:
    text = resources.files("crawl_assets.index").joinpath("kibana", "crawl_overview.ndjson").read_text("utf-8")
    objects = [json.loads(line) for line in text.splitlines() if line.strip()]
    ids = {(o["type"], o["id"]) for o in objects}
    assert ("index-pattern", "crawl-records") in ids and ("dashboard", "crawl-overview") in ids
    for obj in objects:
        for ref in obj["references"]:
            assert (ref["type"], ref["id"]) in ids, ref
    props = load_template("records")["template"]["mappings"]["properties"]
    fields = {agg["params"]["field"] for o in objects if o["type"] == "visualization"
              for agg in json.loads(o["attributes"]["visState"])["aggs"] if "field" in agg["params"]}
    assert fields == {"created_at", "platform", "hashtags", "lang"} and fields <= set(props)
    titles = {o["attributes"]["title"] for o in objects if o["type"] == "visualization"}
    assert titles == {"Volume over time", "Top hashtags", "Languages"}


def test_every_visualization_runs_on_the_real_node(es, tmp_path) -> None:
    """Each visualization's aggregations, as Elasticsearch requests, over the data view's pattern on
    indexed records: the fields are aggregatable there and give buckets (tombstones excluded)."""
    from crawl_assets.index.sink import index_documents
    from crawl_assets_tests.index.docs import record

    docs = [record(i, es.tenant, month=1 + i % 3) for i in range(12)]
    docs[0].update(deleted=True, deleted_at="2026-05-01T00:00:00Z")
    index_documents(es.client, docs, family="records", tenant=es.tenant, deadletter_root=str(tmp_path))
    text = resources.files("crawl_assets.index").joinpath("kibana", "crawl_overview.ndjson").read_text("utf-8")
    objects = [json.loads(line) for line in text.splitlines() if line.strip()]
    [pattern] = [o["attributes"] for o in objects if o["type"] == "index-pattern"]
    time_field = es.client.indices.get_field_mapping(index=pattern["title"], fields=pattern["timeFieldName"])
    assert {next(iter(m["mappings"].values()))["mapping"]["created_at"]["type"] for m in time_field.values()} == {"date"}
    for obj in (o for o in objects if o["type"] == "visualization"):
        aggs = {}
        for agg in json.loads(obj["attributes"]["visState"])["aggs"]:
            field = agg["params"].get("field")
            if agg["type"] == "date_histogram":
                aggs[agg["id"]] = {"date_histogram": {"field": field, "calendar_interval": "month"}}
            elif agg["type"] == "terms":
                aggs[agg["id"]] = {"terms": {"field": field, "size": agg["params"].get("size", 10)}}
        resp = es.client.search(index=pattern["title"], size=0, aggs=aggs,
                                query={"bool": {"must_not": [{"term": {"deleted": True}}]}})
        assert resp["hits"]["total"]["value"] == 11
        assert all(resp["aggregations"][a]["buckets"] for a in aggs), obj["attributes"]["title"]
