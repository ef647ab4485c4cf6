"""An author's profile from observed data only: activity over time, languages, hashtags, sources, and the
reply, mention, quote and repost degrees, computed from the tenant's records.

Out-degrees count the author's records that reply to / quote / repost another record or mention someone.
In-degrees count other records that reply to / quote / repost one of the author's records (looked up for
the author's ``MAX_KEYS_FOR_IN_DEGREE`` most recent records; ``in_degree_complete`` says whether that
covered them all) or mention the author's handle. Profile facts the platform gave (display name,
followers) come from the authors index when it holds the author; model-made features come only from the
enrichment layer (an authors document's ``enrichment`` field, and the account features the enrichers wrote in
the tenant's features index, e.g. ``account_activity``) and are returned under ``inferred``, labelled as such.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.query.aggregations import run, timeline
from crawl_assets.query.filters import RecordFilter, scoped_query
from crawl_assets.index.naming import read_alias
from crawl_assets.query.clauses import author_query

MAX_KEYS_FOR_IN_DEGREE = 10_000
TOP = 20
_OUT = {"reply": "reply_to", "quote": "quote_of", "repost": "repost_of"}


def _authors_doc(client: Elasticsearch, tenant: str, author: str) -> dict[str, Any] | None:
    handles = sorted({author.lstrip("@"), author.lstrip("@").casefold()})
    query = {"bool": {"filter": [{"term": {"tenant": tenant}}],
                      "should": [{"term": {"author_id": author}}, {"terms": {"handle": handles}}],
                      "minimum_should_match": 1}}
    try:
        hits = client.search(index=read_alias("authors", tenant), ignore_unavailable=True, size=1, query=query,
                             sort=[{"last_seen": {"order": "desc", "missing": "_last"}}])["hits"]["hits"]
    except NotFoundError:
        return None
    return hits[0]["_source"] if hits else None


def _activity(client: Elasticsearch, tenant: str, flt: RecordFilter, author: str, interval: str, calendar: str,
              time_zone: str, gregorian: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if calendar != "jalali":
        return [{"start": b["key_as_string"], "count": b["doc_count"]} for b in gregorian]
    rows = timeline(client, tenant, replace(flt, authors=(author,)), interval, time_zone, calendar)
    return [row for row in rows if row["count"]]


def author_profile(client: Elasticsearch, tenant: str, author: str, flt: RecordFilter | None = None,
                   interval: str = "month", calendar: str = "gregorian",
                   time_zone: str = "UTC") -> dict[str, Any] | None:
    """The profile of ``author`` (platform id or handle) over the filtered records; None when the tenant
    has no record of that author. ``calendar="jalali"``: activity in Jalali buckets of ``time_zone``
    (``aggregations.timeline``), named, the empty ones left out."""
    flt = flt or RecordFilter()
    mine = scoped_query(tenant, flt, [author_query(author)])
    aggs: dict[str, Any] = {
        "first": {"min": {"field": "created_at"}}, "last": {"max": {"field": "created_at"}},
        "activity": {"date_histogram": {"field": "created_at", "calendar_interval": interval, "min_doc_count": 1}},
        "languages": {"terms": {"field": "lang", "size": TOP}},
        "hashtags": {"terms": {"field": "hashtags", "size": TOP}},
        "sources": {"terms": {"field": "source", "size": TOP}},
        "platforms": {"terms": {"field": "platform", "size": 10}},
        "ids": {"terms": {"field": "author_id", "size": 10}},
        "handles": {"terms": {"field": "author_handle", "size": 10}},
        "kinds": {"terms": {"field": "kind", "size": TOP}},
        "mentioned": {"terms": {"field": "mentions", "size": TOP}},
        "deleted": {"filter": {"term": {"deleted": True}}},
        **{f"out_{name}": {"filter": {"exists": {"field": field}}} for name, field in _OUT.items()},
        "out_mention": {"filter": {"exists": {"field": "mentions"}}},
    }
    resp = run(client, tenant, {"query": mine, "aggs": aggs})
    total = int(resp["hits"]["total"]["value"])
    if total == 0:
        return None
    a = resp["aggregations"]
    handles = [b["key"] for b in a["handles"]["buckets"]]
    keys, complete = _recent_keys(client, tenant, mine)
    in_deg = _in_degrees(client, tenant, flt, keys, handles)

    def terms(name: str) -> list[dict[str, Any]]:
        return [{"value": b["key"], "count": b["doc_count"]} for b in a[name]["buckets"]]

    profile_doc = _authors_doc(client, tenant, author)
    observed_profile = None
    features: dict[str, Any] = {}
    if profile_doc:
        observed_profile = {k: profile_doc.get(k) for k in ("display_name", "description", "verified", "created_at",
                                                            "metrics", "urls", "first_seen", "last_seen")}
        features.update(profile_doc.get("enrichment") or {})
    accounts = _account_features(client, tenant, [b["key"] for b in a["platforms"]["buckets"]],
                                 [b["key"] for b in a["ids"]["buckets"]])
    for doc in accounts:  # what the account enrichers wrote (account_activity), by enricher
        features[doc["enricher"]] = doc.get(doc["enricher"])
    inferred = None
    if features:
        inferred = {"source": "enrichment (model-made, not observed)", "features": features}
        if accounts:
            inferred["stamps"] = {doc["enricher"]: doc.get("enricher_version") for doc in accounts}
    return {
        "author": author, "author_ids": [b["key"] for b in a["ids"]["buckets"]], "handles": handles,
        "platforms": terms("platforms"), "records": total, "deleted_records": a["deleted"]["doc_count"],
        "first_seen": a["first"].get("value_as_string"), "last_seen": a["last"].get("value_as_string"),
        "activity": {"interval": interval, "buckets": _activity(client, tenant, flt, author, interval, calendar,
                                                                time_zone, a["activity"]["buckets"])},
        "languages": terms("languages"), "hashtags": terms("hashtags"), "sources": terms("sources"),
        "kinds": terms("kinds"), "mentions_most": terms("mentioned"),
        "degrees": {"out": {name: a[f"out_{name}"]["doc_count"] for name in (*_OUT, "mention")},
                    "in": in_deg, "in_degree_complete": complete},
        "observed_profile": observed_profile, "inferred": inferred,
    }


def _account_features(client: Elasticsearch, tenant: str, platforms: list[str],
                      author_ids: list[str]) -> list[dict[str, Any]]:
    """The tenant's account-level feature documents of these author ids (the enrichment's ``kind: account``,
    keyed by platform and author id); none when the features index does not exist yet."""
    if not author_ids:
        return []
    query = {"bool": {"filter": [{"term": {"tenant": tenant}}, {"term": {"kind": "account"}},
                                 {"terms": {"platform": platforms}}, {"terms": {"author_id": author_ids}}]}}
    try:
        hits = client.search(index=read_alias("features", tenant), ignore_unavailable=True, size=TOP, query=query,
                             sort=[{"key": "asc"}])["hits"]["hits"]
    except NotFoundError:
        return []
    return [hit["_source"] for hit in hits]


def _recent_keys(client: Elasticsearch, tenant: str, query: dict[str, Any]) -> tuple[list[str], bool]:
    try:
        resp = client.search(index=read_alias("records", tenant), ignore_unavailable=True, query=query,
                             size=MAX_KEYS_FOR_IN_DEGREE, source=False, docvalue_fields=["key"],
                             sort=[{"created_at": "desc"}, {"key": "asc"}], track_total_hits=MAX_KEYS_FOR_IN_DEGREE + 1)
    except NotFoundError:
        return [], True
    hits = resp["hits"]["hits"]
    keys = [h["fields"]["key"][0] for h in hits]
    return keys, resp["hits"]["total"]["value"] <= len(keys)


def _in_degrees(client: Elasticsearch, tenant: str, flt: RecordFilter, keys: list[str],
                handles: list[str]) -> dict[str, int]:
    aggs: dict[str, Any] = {name: {"filter": {"terms": {field: keys}}} for name, field in _OUT.items()}
    aggs["mention"] = {"filter": {"terms": {"mentions": sorted({h.casefold() for h in handles})}}}
    clause = {"bool": {"should": [{"terms": {f: keys}} for f in _OUT.values()]
                       + [{"terms": {"mentions": sorted({h.casefold() for h in handles})}}], "minimum_should_match": 1}}
    resp = run(client, tenant, {"query": scoped_query(tenant, flt, [clause]), "aggs": aggs})
    got = resp.get("aggregations") or {}
    return {name: int(got.get(name, {}).get("doc_count", 0)) for name in (*_OUT, "mention")}
