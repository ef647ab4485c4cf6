"""The requests bench/api.py compares: each one as the API call and as the same request a user would send
straight to Elasticsearch with the official Python client, plus how to read a non-empty answer from both.

Shared by the equality check (bench/api.py, before the load) and the load (bench/api_locust.py), so the
figures compare exactly the requests whose answers were shown to be the same.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from crawl_assets.index.filters import RecordFilter, scoped_query
from crawl_assets.index.naming import read_alias
from crawl_assets.index.search import search_body

TENANT = "bench"
ALIAS = read_alias("records", TENANT)
Q = "بازار تهران"
START, END = "2025-03-01T00:00:00Z", "2025-04-01T00:00:00Z"
RECORD_KEY = "x:10000005"
_RANGE = RecordFilter(start=datetime(2025, 3, 1, tzinfo=timezone.utc), end=datetime(2025, 4, 1, tzinfo=timezone.utc))

# name -> (API path, API params, Elasticsearch search body, weight in the mixed load)
REQUESTS: dict[str, tuple[str, dict[str, str], dict[str, Any], int]] = {
    "search": ("/v1/search", {"q": Q, "size": "20"}, search_body(TENANT, RecordFilter(q=Q), "relevance", 20), 4),
    "top_hashtags": ("/v1/aggregations/top/hashtags", {"start": START, "end": END}, {
        "size": 0, "track_total_hits": True, "query": scoped_query(TENANT, _RANGE),
        "aggs": {"top": {"terms": {"field": "hashtags", "size": 20, "shard_size": 100}},
                 "missing": {"missing": {"field": "hashtags"}}}}, 2),
    "timeline": ("/v1/aggregations/timeline", {"start": START, "end": END, "interval": "day"}, {
        "size": 0, "track_total_hits": True, "query": scoped_query(TENANT, _RANGE),
        "aggs": {"t": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "time_zone": "UTC",
                                          "min_doc_count": 0,
                                          "extended_bounds": {"min": START, "max": "2025-03-31T23:59:59.999Z"}}}}}, 2),
    "record": (f"/v1/records/{RECORD_KEY}", {}, {
        "size": 1000, "query": {"bool": {"filter": [{"term": {"tenant": TENANT}}, {"terms": {"key": [RECORD_KEY]}}]}}}, 1),
}


def api_answer(name: str, body: dict[str, Any]) -> list[Any]:
    """What the API answered, in a form comparable with ``direct_answer``."""
    if name == "search":
        return [r["key"] for r in body["records"]]
    if name == "top_hashtags":
        return [(b["value"], b["count"]) for b in body["buckets"]]
    if name == "timeline":
        return [b["count"] for b in body["buckets"]]
    return [body["record"]["key"], body["record"]["text"]]


def direct_answer(name: str, resp: dict[str, Any]) -> list[Any]:
    """What Elasticsearch answered to the same request."""
    if name in ("search", "record"):
        hits = resp["hits"]["hits"]
        return [h["_source"]["key"] for h in hits] if name == "search" else \
            [x for h in hits[:1] for x in (h["_source"]["key"], h["_source"]["text"])]
    if name == "top_hashtags":
        return [(b["key"], b["doc_count"]) for b in resp["aggregations"]["top"]["buckets"]]
    return [b["doc_count"] for b in resp["aggregations"]["t"]["buckets"]]


def non_empty(name: str, answer: list[Any]) -> bool:
    return bool(answer) and (name != "timeline" or sum(answer) > 0)
