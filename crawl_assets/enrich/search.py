"""Features next to records: the joins, as plain functions over a client (like ``index.queries``).

Features live in ``crawl-features-{tenant}`` and name their record by ``record_key`` (= the record's ``key``
and ``_id``); clusters, trend windows and accounts name what they describe. A join is two queries, both
through the tenant's read aliases and filtered on the tenant, so a tenant never reaches another's data:

* a record's features: ``term record_key`` in features;
* the records of a near-duplicate cluster: the cluster's member documents (``near_duplicates.cluster_id``),
  then their ``record_key``s as an ``ids`` query on the records;
* the trend windows of a hashtag or term: ``trends.term`` (and ``trends.term_kind``), by window; the records
  of one window: ``hashtags`` and ``created_at`` in [window_start, window_end) on the records;
* an account's activity features: ``platform`` and ``author_id``;
* records with personal data (of some types), and the redacted view of records (``text_clean`` with the
  spans replaced by their type, ``text`` left out).
"""

from __future__ import annotations

from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.enrich.pii import clean_spans, redacted_record
from crawl_assets.index.naming import check_tenant, read_alias
from crawl_assets.index.queries import _filtered, _range, _search

MAX_KEYS = 10_000


def _features(client: Elasticsearch, tenant: str, filters: list[dict[str, Any]], *, size: int = 1000,
              sort: list[Any] | None = None) -> list[dict[str, Any]]:
    query = {"bool": {"filter": [{"term": {"tenant": check_tenant(tenant)}}, *filters]}}
    try:
        resp = client.search(index=read_alias("features", tenant), ignore_unavailable=True, query=query, size=size,
                             sort=sort or [{"key": "asc"}])
    except NotFoundError:
        return []
    return [hit["_source"] for hit in resp["hits"]["hits"]]


def records_by_key(client: Elasticsearch, tenant: str, keys: list[str], *, include_deleted: bool = False) -> list[dict[str, Any]]:
    """The records of ``keys`` (at most ``MAX_KEYS``), oldest first."""
    if not keys:
        return []
    keys = keys[:MAX_KEYS]
    resp = _search(client, tenant, query=_filtered(tenant, filters=[{"ids": {"values": keys}}],
                                                   include_deleted=include_deleted),
                   size=len(keys), sort=[{"created_at": "asc"}, {"key": "asc"}])
    return [hit["_source"] for hit in resp["hits"]["hits"]]


def record_features(client: Elasticsearch, tenant: str, key: str) -> dict[str, dict[str, Any]]:
    """Every record-level feature of one record, by enricher."""
    return {doc["enricher"]: doc for doc in _features(client, tenant, [{"term": {"record_key": key}}])}


def cluster(client: Elasticsearch, tenant: str, cluster_id: str) -> dict[str, Any] | None:
    found = _features(client, tenant, [{"term": {"kind": "cluster"}},
                                       {"term": {"near_duplicates.cluster_id": cluster_id}}], size=1)
    return found[0] if found else None


def cluster_records(client: Elasticsearch, tenant: str, cluster_id: str) -> list[dict[str, Any]]:
    """The records of a near-duplicate cluster, oldest first (deleted ones too: they were observed)."""
    members = _features(client, tenant, [{"term": {"kind": "record"}}, {"term": {"enricher": "near_duplicates"}},
                                         {"term": {"near_duplicates.cluster_id": cluster_id}}], size=MAX_KEYS)
    return records_by_key(client, tenant, [m["record_key"] for m in members], include_deleted=True)


def largest_clusters(client: Elasticsearch, tenant: str, *, min_accounts: int = 2, size: int = 20) -> list[dict[str, Any]]:
    """Near-duplicate clusters spanning at least ``min_accounts`` accounts, the most members first."""
    return _features(client, tenant, [{"term": {"kind": "cluster"}},
                                      {"range": {"near_duplicates.account_count": {"gte": min_accounts}}}],
                     size=size, sort=[{"near_duplicates.member_count": "desc"}, {"key": "asc"}])


def trend_windows(client: Elasticsearch, tenant: str, term: str, *, kind: str = "hashtag") -> list[dict[str, Any]]:
    """The windows in which a hashtag (without ``#``, casefolded) or term trended, oldest first, each with
    its count, baseline and explanation."""
    docs = _features(client, tenant, [{"term": {"enricher": "trends"}}, {"term": {"trends.term_kind": kind}},
                                      {"term": {"trends.term": term.lstrip("#").casefold()}}],
                     sort=[{"trends.window_start": "asc"}])
    return [doc["trends"] for doc in docs]


def top_trends(client: Elasticsearch, tenant: str, *, start: Any = None, end: Any = None,
               size: int = 20) -> list[dict[str, Any]]:
    """Trend windows starting in [start, end), the highest score first."""
    bounds = {op: v for op, v in (("gte", start), ("lt", end)) if v}
    filters: list[dict[str, Any]] = [{"term": {"enricher": "trends"}}]
    if bounds:
        filters.append({"range": {"trends.window_start": bounds}})
    return [d["trends"] for d in _features(client, tenant, filters, size=size,
                                           sort=[{"trends.score": "desc"}, {"key": "asc"}])]


def trend_records(client: Elasticsearch, tenant: str, trend: dict[str, Any], size: int = 100) -> list[dict[str, Any]]:
    """Records of one trend window holding its hashtag (for a term: matching its text), oldest first."""
    if trend["term_kind"] == "hashtag":
        match: list[dict[str, Any]] = [{"term": {"hashtags": trend["term"]}}]
    else:
        match = [{"match": {"text": trend["term"]}}]
    query = _filtered(tenant, filters=[*match, *_range(trend["window_start"], trend["window_end"])])
    resp = _search(client, tenant, query=query, size=size, sort=[{"created_at": "asc"}, {"key": "asc"}])
    return [hit["_source"] for hit in resp["hits"]["hits"]]


def account_activity(client: Elasticsearch, tenant: str, platform: str, author_id: str) -> dict[str, Any] | None:
    found = _features(client, tenant, [{"term": {"kind": "account"}}, {"term": {"enricher": "account_activity"}},
                                       {"term": {"platform": platform}},
                                       {"term": {"author_id": author_id}}], size=1)
    return found[0] if found else None


def records_with_personal_data(client: Elasticsearch, tenant: str, types: list[str] | None = None,
                               size: int = 100) -> list[dict[str, Any]]:
    """Feature documents of records holding personal data (of any of ``types``), newest first."""
    filters: list[dict[str, Any]] = [{"term": {"enricher": "personal_data"}}]
    if types:
        filters.append({"terms": {"personal_data.types": types}})
    return _features(client, tenant, filters, size=size, sort=[{"created_at": "desc"}, {"key": "asc"}])


def redacted_view(client: Elasticsearch, tenant: str, keys: list[str]) -> list[dict[str, Any]]:
    """The records of ``keys`` with ``text_clean`` redacted where personal data was found, ``text`` left out."""
    spans = {doc["record_key"]: clean_spans(doc["personal_data"]["spans"]) for doc in _features(
        client, tenant, [{"term": {"enricher": "personal_data"}}, {"terms": {"record_key": keys[:MAX_KEYS]}}],
        size=MAX_KEYS)}
    return [redacted_record(record, spans.get(record["key"], [])) for record in records_by_key(client, tenant, keys)]
