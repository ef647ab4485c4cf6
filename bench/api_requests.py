"""The requests bench/api.py compares: each one as the API call and as the same request a user would send
straight to Elasticsearch with the official Python client, plus how to read a non-empty answer from both.

Each endpoint has ``PER_ENDPOINT`` variants (``variants``), so the comparison is not one query repeated
(Elasticsearch's caches would then answer both sides from memory):
- search: the words of ``api_corpus.search_words`` (selective, as a researcher's search is), every third one
  within a 30-day range, every fifth one sorted newest first (else by relevance); 20 records;
- top_hashtags, timeline (daily): a 30-day window starting on a different day;
- record: one record by key, a different key each time.
The equality check (bench/api.py) runs every variant through both paths before anything is measured, and
the one-at-a-time phase and the load send exactly these.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from api_corpus import START, TENANT, search_words
from crawl_assets.query.filters import RecordFilter, scoped_query
from crawl_assets.index.naming import read_alias
from crawl_assets.api.pages import search_body

ALIAS = read_alias("records", TENANT)
PER_ENDPOINT = 30
WEIGHTS = {"search": 4, "top_hashtags": 2, "timeline": 2, "record": 1}  # in the mixed load
# one request: (API path, API params, Elasticsearch search body)
Request = tuple[str, dict[str, str], dict[str, Any]]


def _iso(when) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _window(rng: random.Random, days: int = 30):
    start = START + timedelta(days=rng.randrange(0, 365 - days))
    return start, start + timedelta(days=days)


def _search(i: int, q: str, rng: random.Random) -> Request:
    params = {"q": q, "size": "20"}
    flt = RecordFilter(q=q)
    if i % 3 == 2:
        start, end = _window(rng)
        params |= {"start": _iso(start), "end": _iso(end)}
        flt = RecordFilter(q=q, start=start, end=end)
    sort = "newest" if i % 5 == 4 else "relevance"
    params["sort"] = sort
    return "/v1/search", params, search_body(TENANT, flt, sort, 20)


def _top_hashtags(rng: random.Random) -> Request:
    start, end = _window(rng)
    return "/v1/aggregations/top/hashtags", {"start": _iso(start), "end": _iso(end)}, {
        "size": 0, "track_total_hits": True, "query": scoped_query(TENANT, RecordFilter(start=start, end=end)),
        "aggs": {"top": {"terms": {"field": "hashtags", "size": 20, "shard_size": 100}},
                 "missing": {"missing": {"field": "hashtags"}}}}


def _timeline(rng: random.Random) -> Request:
    start, end = _window(rng)
    last = (end - timedelta(milliseconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ").replace("000Z", "Z")
    return "/v1/aggregations/timeline", {"start": _iso(start), "end": _iso(end), "interval": "day"}, {
        "size": 0, "track_total_hits": True, "query": scoped_query(TENANT, RecordFilter(start=start, end=end)),
        "aggs": {"t": {"date_histogram": {"field": "created_at", "calendar_interval": "day", "time_zone": "UTC",
                                          "min_doc_count": 0, "extended_bounds": {"min": _iso(start), "max": last}}}}}


def _record(rng: random.Random, records: int) -> Request:
    key = f"x:{10_000_000 + rng.randrange(records)}"
    return f"/v1/records/{key}", {}, {
        "size": 1000, "query": {"bool": {"filter": [{"term": {"tenant": TENANT}}, {"terms": {"key": [key]}}]}}}


def variants(records: int, per_endpoint: int = PER_ENDPOINT, seed: int = 5) -> dict[str, list[Request]]:
    """Every compared request, by endpoint (deterministic for a given number of records)."""
    rng = random.Random(seed)
    return {"search": [_search(i, q, rng) for i, q in enumerate(search_words(per_endpoint))],
            "top_hashtags": [_top_hashtags(rng) for _ in range(per_endpoint)],
            "timeline": [_timeline(rng) for _ in range(per_endpoint)],
            "record": [_record(rng, records) for _ in range(per_endpoint)]}


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
