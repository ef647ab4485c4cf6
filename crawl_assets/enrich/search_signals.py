"""Joins of the places, coordination and account-type features (like ``search``; the same tenant filter and
read aliases):

* records' places counted by place id (``places.ids``) with the gazetteer's names and point, and the same
  counts as a GeoJSON FeatureCollection (the place's own point: a city's, a region's seat, a capital);
* the records naming one place: its feature documents' ``record_key``s, then the records;
* the co-sharing groups of a tenant (largest first), and the co-sharing network (every edge document, or one
  group's) as a ``networks.Graph`` that ``graph_formats`` writes as GEXF, GraphML or CSV;
* an account's type signals: ``platform`` and ``author_id`` of the ``account_types`` document.
"""

from __future__ import annotations

from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.enrich.search import MAX_KEYS, _features, records_by_key
from crawl_assets.index.naming import check_tenant, read_alias
from crawl_assets.query.networks import Graph

MAX_PLACES = 1000


def place_counts(client: Elasticsearch, tenant: str, *, kind: str | None = None, country: str | None = None,
                 size: int = 100) -> list[dict[str, Any]]:
    """Records per place (most first), each with the place's kind, country, names and point."""
    from crawl_assets.enrich.gazetteer import load

    filters: list[dict[str, Any]] = [{"term": {"tenant": check_tenant(tenant)}}, {"term": {"enricher": "places"}}]
    if country:
        filters.append({"term": {"places.countries": country.upper()}})
    try:
        resp = client.search(index=read_alias("features", tenant), ignore_unavailable=True, size=0,
                             query={"bool": {"filter": filters}},
                             aggs={"places": {"terms": {"field": "places.ids", "size": min(size, MAX_PLACES) * 4,
                                                        "order": [{"_count": "desc"}, {"_key": "asc"}]}}})
    except NotFoundError:
        return []
    gazetteer = load()
    out = []
    for bucket in resp.get("aggregations", {}).get("places", {}).get("buckets", []):
        place = gazetteer.places.get(bucket["key"])
        if place is None or (kind and place.kind != kind) or (country and place.country != country.upper()):
            continue
        out.append({"place_id": place.id, "kind": place.kind, "name": place.name, "country": place.country,
                    "names": {lang: name for lang, name in reversed(place.names)}, "lat": place.lat,
                    "lon": place.lon, "records": bucket["doc_count"]})
        if len(out) >= size:
            break
    return out


def geojson(counts: list[dict[str, Any]]) -> dict[str, Any]:
    """``place_counts`` as a GeoJSON FeatureCollection of points (places without a point are left out)."""
    features = [{"type": "Feature", "id": c["place_id"],
                 "geometry": {"type": "Point", "coordinates": [round(c["lon"], 4), round(c["lat"], 4)]},
                 "properties": {k: c[k] for k in ("place_id", "kind", "name", "country", "names", "records")}}
                for c in counts if c["lat"] is not None and c["lon"] is not None]
    return {"type": "FeatureCollection", "features": features}


def place_records(client: Elasticsearch, tenant: str, place_id: str, size: int = 100) -> list[dict[str, Any]]:
    """The records naming ``place_id``, oldest first."""
    docs = _features(client, tenant, [{"term": {"enricher": "places"}}, {"term": {"places.ids": place_id}}],
                     size=min(size, MAX_KEYS))
    return records_by_key(client, tenant, [d["record_key"] for d in docs])


def coordination_groups(client: Elasticsearch, tenant: str, *, min_accounts: int = 2,
                        size: int = 20) -> list[dict[str, Any]]:
    """Co-sharing groups of at least ``min_accounts`` accounts, the most co-shares first."""
    docs = _features(client, tenant, [{"term": {"kind": "coordination_group"}},
                                      {"range": {"coordination.account_count": {"gte": min_accounts}}}],
                     size=size, sort=[{"coordination.co_shares": "desc"}, {"key": "asc"}])
    return [d["coordination"] for d in docs]


def co_sharing_graph(client: Elasticsearch, tenant: str, group_id: str | None = None) -> Graph:
    """The co-sharing network (one group's, or every group's) as an undirected graph of accounts."""
    filters: list[dict[str, Any]] = [{"term": {"kind": "coordination_edge"}}]
    if group_id:
        filters.append({"term": {"coordination.group_id": group_id}})
    graph = Graph(kind="co_sharing", directed=False)
    for doc in _features(client, tenant, filters, size=MAX_KEYS):
        edge = doc["coordination"]
        for side in ("source", "target"):
            platform, _, author = edge[side].partition(":")
            handle = edge.get(f"{side}_handle") or ""
            graph.node(edge[side], label=f"@{handle}" if handle else edge[side], kind="account", platform=platform,
                       handle=handle)
        graph.link(edge["source"], edge["target"], edge.get("first_at"))
        stats = graph.edges[tuple(sorted((edge["source"], edge["target"])))]  # type: ignore[index]
        stats.weight = int(edge["weight"])  # co-shared items, not edge documents
        stats.last_at = max(stats.last_at, edge.get("last_at") or "")
    return graph


def account_types(client: Elasticsearch, tenant: str, platform: str, author_id: str) -> dict[str, Any] | None:
    """The ``account_types`` document of one account (score, drivers, features), or None."""
    found = _features(client, tenant, [{"term": {"enricher": "account_types"}}, {"term": {"platform": platform}},
                                       {"term": {"author_id": author_id}}], size=1)
    return found[0] if found else None
