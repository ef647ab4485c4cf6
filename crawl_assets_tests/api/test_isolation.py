"""A key reads its own tenant and nothing else, whatever the parameters hold: wildcards, index and alias
names of other tenants, commas, ``..``, ``_all``, query syntax naming fields. ``rival`` and ``demo-x``
(whose name starts like ``demo``'s) hold a secret word, demo's hashtags and demo's author handle."""

from __future__ import annotations

import io

import pyarrow.parquet as pq
import pytest

from crawl_assets_tests.api.conftest import auth
from crawl_assets_tests.api.corpus import RISING, SECRET

CRAFTED_TERMS = ["*", "_all", "rival", "demo-x", "crawl-records-rival", "crawl-records-*", "crawl-records-demo-x.2026.03",
                 "rival,demo", "*,-demo", "../rival", "demo/../rival", "crawl-*", "%2A", "rival.x.gen-r", "demo-x.x.gen-x"]
CRAFTED_QUERIES = [SECRET, f"tenant:rival {SECRET}", f"_index:crawl-records-rival {SECRET}", "*", f"{SECRET}*",
                   f"+{SECRET} | tenant:rival", f'"{SECRET}"', f"{SECRET} OR *"]


def _no_foreign(records: list[dict], tenant: str = "demo") -> None:
    assert all(r["tenant"] == tenant for r in records), {r["tenant"] for r in records}
    assert not any(SECRET in (r.get("text") or "") for r in records)


@pytest.mark.parametrize("query", CRAFTED_QUERIES)
def test_query_syntax_never_reaches_another_tenant(demo, query: str) -> None:
    page = demo("/v1/search", q=query, size=500, deleted="include")
    _no_foreign(page["records"])
    if SECRET in query:
        assert page["total"] == 0


@pytest.mark.parametrize("value", CRAFTED_TERMS)
@pytest.mark.parametrize("param", ["source", "author", "hashtag", "mention", "kind", "lang"])
def test_filter_values_are_terms_not_index_names(api, world, param: str, value: str) -> None:
    resp = api.get("/v1/search", params={param: value, "size": 500, "deleted": "include"}, headers=auth(world))
    assert resp.status_code in (200, 400), resp.text
    if resp.status_code == 200:
        _no_foreign(resp.json()["records"])
    else:
        assert param in resp.json()["message"]


@pytest.mark.parametrize("path", ["/v1/records/x:9700", "/v1/threads/x:9700", "/v1/authors/@analyst_a"])
def test_another_tenants_records_are_not_found(api, world, path: str) -> None:
    resp = api.get(path, headers=auth(world))
    if path.startswith("/v1/authors"):
        assert resp.status_code == 200 and resp.json()["records"] < 20
        assert all(b["value"] != "محرمانه" for b in resp.json()["hashtags"])
    else:
        assert resp.status_code == 404
    assert api.get(path, headers=auth(world, "rival")).status_code == 200 or path.startswith("/v1/authors")


@pytest.mark.parametrize("path", ["/v1/records/..%2F..%2Frival", "/v1/records/x:*", "/v1/records/_all",
                                  "/v1/threads/x:9700,x:9701", "/v1/authors/*", "/v1/records/crawl-records-rival"])
def test_crafted_paths_are_refused_or_find_nothing(api, world, path: str) -> None:
    resp = api.get(path, headers=auth(world))
    assert resp.status_code in (400, 404), (path, resp.status_code, resp.text)
    assert SECRET not in resp.text and "rival" not in resp.json().get("message", "").replace(path, "")


def test_aggregations_trends_networks_and_exports_see_only_the_callers_tenant(demo) -> None:
    hashtags = {b["value"] for b in demo("/v1/aggregations/top/hashtags", size=1000)["buckets"]}
    assert "محرمانه" not in hashtags
    rival_tags = {b["value"] for b in demo("/v1/aggregations/top/hashtags", tenant="rival", size=1000)["buckets"]}
    assert rival_tags == {RISING, "محرمانه"}
    assert demo("/v1/aggregations/counts", tenant="demo-x")["records"] == 20
    trends = demo("/v1/trends", until="2026-03-06T00:00:00Z", window="1d", tenant="demo-x", min_count=1)
    assert {i["item"] for i in trends["items"]} == {RISING, "محرمانه"}
    gexf = demo("/v1/networks/mention", format="gexf").text
    assert SECRET not in gexf and "demo-x" not in gexf.split("<nodes")[1]
    jsonl = demo("/v1/exports/records", format="jsonl", fields=["key", "tenant", "text"]).text
    assert SECRET not in jsonl and '"tenant":"rival"' not in jsonl
    parquet = pq.read_table(io.BytesIO(demo("/v1/exports/records", format="parquet", fields=["tenant"]).content))
    assert set(parquet.column("tenant").to_pylist()) == {"demo"}
    own = demo("/v1/exports/records", format="jsonl", tenant="rival", fields=["tenant", "text"]).text
    assert own.count(SECRET) == 20 and '"tenant":"demo"' not in own
