"""Features next to records: the joins, as plain functions over a client (like ``query.clauses``).

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
  spans replaced by their type, ``text`` left out);
* topics: the topic documents; a topic's records (``topics.ids``, then an ``ids`` query on the records); its
  timeline (a date histogram of its record documents, which carry ``created_at``);
* entities: the record keys of the entity documents naming an id or a folded name (the API's ``entity=``).
"""

from __future__ import annotations

from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.enrich.pii import clean_spans, redacted_record
from crawl_assets.index.naming import check_tenant, read_alias
from crawl_assets.query.clauses import _filtered, _range, _search

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


# -- topics ----------------------------------------------------------------------------------------------
def topics(client: Elasticsearch, tenant: str, *, size: int = 100) -> list[dict[str, Any]]:
    """The tenant's topics (id, label, top stems and surface forms, records, share, first and last seen), the
    most records first."""
    docs = _features(client, tenant, [{"term": {"enricher": "topics"}}, {"term": {"kind": "topic"}}], size=size,
                     sort=[{"topics.records": "desc"}, {"key": "asc"}])
    return [{**doc["topics"], "enricher_version": doc["enricher_version"]} for doc in docs]


def topic(client: Elasticsearch, tenant: str, topic_id: int) -> dict[str, Any] | None:
    found = _features(client, tenant, [{"term": {"enricher": "topics"}}, {"term": {"kind": "topic"}},
                                       {"term": {"topics.topic_id": topic_id}}], size=1)
    return {**found[0]["topics"], "enricher_version": found[0]["enricher_version"]} if found else None


def _assigned(topic_id: int, start: Any = None, end: Any = None) -> list[dict[str, Any]]:
    filters: list[dict[str, Any]] = [{"term": {"enricher": "topics"}}, {"term": {"kind": "record"}},
                                     {"term": {"topics.ids": topic_id}}]
    bounds = {op: v for op, v in (("gte", start), ("lt", end)) if v}
    if bounds:
        filters.append({"range": {"created_at": bounds}})
    return filters


def topic_records(client: Elasticsearch, tenant: str, topic_id: int, *, size: int = 50, start: Any = None,
                  end: Any = None) -> list[dict[str, Any]]:
    """The records of a topic (created in [start, end)), newest first, each with its topic weights
    (``topics``: ids and weights); records deleted on their platform are left out."""
    docs = _features(client, tenant, _assigned(topic_id, start, end), size=min(size, MAX_KEYS),
                     sort=[{"created_at": "desc"}, {"key": "asc"}])
    weights = {d["record_key"]: d["topics"] for d in docs}
    found = {r["key"]: r for r in records_by_key(client, tenant, list(weights))}
    return [{**found[k], "topics": weights[k]} for k in weights if k in found]


def topic_timeline(client: Elasticsearch, tenant: str, topic_id: int, *, interval: str = "day",
                   time_zone: str = "UTC", max_buckets: int = 5000) -> list[dict[str, Any]]:
    """Records of a topic per calendar ``interval`` (created_at, in ``time_zone``), empty buckets included;
    ``ValueError`` when the topic's span would need more than ``max_buckets``."""
    found = topic(client, tenant, topic_id)
    if found is None or not found.get("first_seen"):
        return []
    from datetime import datetime

    from crawl_assets.query.aggregations import INTERVALS

    first, last = (datetime.fromisoformat(found[k].replace("Z", "+00:00")) for k in ("first_seen", "last_seen"))
    if int((last - first) / INTERVALS[interval]) + 2 > max_buckets:
        raise ValueError(f"a {interval} timeline of topic {topic_id} ({found['first_seen']} to {found['last_seen']}) "
                         f"would have more than {max_buckets} buckets: choose a longer interval")
    query = {"bool": {"filter": [{"term": {"tenant": check_tenant(tenant)}}, *_assigned(topic_id)],
                      "must_not": [{"exists": {"field": "deleted_at"}}]}}
    hist = {"field": "created_at", "calendar_interval": interval, "time_zone": time_zone, "min_doc_count": 0}
    try:
        resp = client.search(index=read_alias("features", tenant), ignore_unavailable=True, query=query, size=0,
                             aggs={"t": {"date_histogram": hist}})
    except NotFoundError:
        return []
    buckets = (resp.get("aggregations") or {}).get("t", {}).get("buckets", [])
    return [{"start": b["key_as_string"], "count": b["doc_count"]} for b in buckets]


# -- entities --------------------------------------------------------------------------------------------
ENTITY_ID = r"(per|org|loc):\S{1,200}"


def entity_terms(values: list[str]) -> dict[str, list[str]]:
    """What ``entity=`` values match: an id as given (``loc:tehran``), a name folded as the enricher folds names
    (``Tehran``, ``تهران``), and for a name in the gazetteer its id too."""
    import re

    from crawl_assets.enrich.entity_rules import fold, gazetteer

    ids, names = [], []
    for value in values:
        if re.fullmatch(ENTITY_ID, value):
            ids.append(value)
            continue
        folded = tuple(fold(w) for w in value.split())
        names.append(" ".join(folded))
        entry = gazetteer().get(folded)
        if entry is not None:
            ids.append(entry.id)
    return {"ids": sorted(set(ids)), "names": sorted(set(names))}


def entity_clause(values: list[str]) -> dict[str, Any]:
    """Features of records naming any of ``values`` (ids or names, see ``entity_terms``)."""
    terms = entity_terms(values)
    should = [{"terms": {f"entities.{k}": v}} for k, v in terms.items() if v]
    return {"bool": {"filter": [{"term": {"enricher": "entities"}}], "should": should, "minimum_should_match": 1}}


def entity_keys_search(tenant: str, values: list[str], limit: int = MAX_KEYS) -> dict[str, Any]:
    """The search (``index``, ``query``, ...) for the keys of the records naming ``values``: ``limit`` keys at
    most, the total counted up to ``limit`` + 1 so a caller can tell that there were more (``entity_more``)."""
    return {"index": read_alias("features", tenant), "ignore_unavailable": True, "size": limit,
            "track_total_hits": limit + 1,
            "query": {"bool": {"filter": [{"term": {"tenant": check_tenant(tenant)}}, entity_clause(values)]}},
            "source": False, "docvalue_fields": ["record_key"], "sort": [{"record_key": "asc"}]}


def entity_keys(body: dict[str, Any]) -> list[str]:
    """The record keys of an ``entity_keys_search`` answer."""
    return [hit["fields"]["record_key"][0] for hit in body["hits"]["hits"] if hit.get("fields", {}).get("record_key")]


def entity_more(body: dict[str, Any], limit: int = MAX_KEYS) -> bool:
    """Whether more records than ``limit`` matched an ``entity_keys_search``."""
    return body["hits"]["total"]["value"] > limit


def records_with_entity(client: Elasticsearch, tenant: str, values: list[str], size: int = 100) -> list[dict[str, Any]]:
    """Entity features of the records naming any of ``values``, newest first (each with its spans)."""
    return _features(client, tenant, [entity_clause(values)], size=size,
                     sort=[{"created_at": "desc"}, {"key": "asc"}])
