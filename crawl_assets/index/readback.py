"""What the write side reads back from our indices (the API's queries are ``crawl_assets.query``): document
counts per tenant/source (for the index stage's checks), per-index figures (for the CLI), and the stale edges.

Stale edges are those a record no longer has: when a newer observation of a record drops a hashtag, a mention
or a reply target, its old edge documents must stop counting, or the index keeps a relation the lake's
``relation_edges`` table no longer holds.

They become tombstones (``deleted: true``), not hard deletes: a tombstone carries the newer
observation's external version (in its action line, as every edge does), so an edge sent again from an
older observation (a backfill, another source holding the same record) is a version conflict, a no-op, and cannot bring the
edge back; a later observation that has the edge again overwrites the tombstone. (A hard delete would keep its
version only for ``index.gc_deletes``, 60 s by default.) Only the erasure path hard-deletes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.index.documents import EDGE_FIELDS
from crawl_assets.index.naming import FAMILIES, check_family, index_pattern, parse_physical, read_alias


def count_query(tenant: str, source: str | None = None, include_tombstones: bool = False,
                extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The query behind :func:`count_documents` (tenant, optional source, tombstones excluded by default)."""
    filters: list[dict[str, Any]] = [{"term": {"tenant": tenant}}]
    if source is not None:
        filters.append({"term": {"source": source}})
    filters += extra or []
    query: dict[str, Any] = {"bool": {"filter": filters}}
    if not include_tombstones:
        query["bool"]["must_not"] = [{"term": {"deleted": True}}]
    return query


def count_documents(client: Elasticsearch, tenant: str, source: str | None = None,
                    family: Literal["records", "edges", "authors"] = "records",
                    include_tombstones: bool = False) -> int:
    """Documents of a tenant (and source) in a family, through the tenant's read alias; 0 when none exist.

    Counts what is searchable: the sink refreshes the indices it wrote when it closes.
    """
    check_family(family)
    try:
        resp = client.count(index=read_alias(family, tenant), ignore_unavailable=True, allow_no_indices=True,
                            query=count_query(tenant, source, include_tombstones))
    except NotFoundError:
        return 0
    return int(resp["count"])


@dataclass
class IndexStat:
    index: str
    family: str
    tenant: str
    month: str | None
    docs: int
    bytes: int
    tombstones: int


def index_stats(client: Elasticsearch, family: str | None = None, tenant: str | None = None) -> list[IndexStat]:
    """One row per concrete index of ours (docs, store bytes, tombstones), sorted by name."""
    families = [check_family(family)] if family else list(FAMILIES)
    rows: list[IndexStat] = []
    for fam in families:
        cat = client.cat.indices(index=index_pattern(fam, tenant), format="json", bytes="b",
                                 expand_wildcards="open").body
        for row in cat:
            parsed = parse_physical(row["index"])  # a reindexed generation counts as its logical index
            if not parsed or (tenant is not None and parsed[1] != tenant):
                continue  # a pattern over tenant "a" also matches tenant "a-b"
            tombstones = 0
            if fam == "records":
                tombstones = int(client.count(index=row["index"], query={"term": {"deleted": True}})["count"])
            rows.append(IndexStat(row["index"], parsed[0], parsed[1], parsed[2], int(row.get("docs.count") or 0),
                                  int(row.get("store.size") or 0), tombstones))
    return sorted(rows, key=lambda r: r.index)


# Stale edges

_CHUNK = 100  # records per search (a record has few edges; a fuller group is split)
_PAGE = 10_000


class StaleEdgeSearchFailed(RuntimeError):
    """The index could not list a record's edges completely: the prune must be retried, not skipped."""


def _edges_of(client: Elasticsearch, tenant: str, sources: list[str]) -> Iterator[dict[str, Any]]:
    """Every live edge document whose ``src`` is one of ``sources`` (its ``_id`` and fields); a group
    with more edges than one page holds is split until each page is complete."""
    query = {"bool": {"filter": [{"terms": {"src": sources}}], "must_not": [{"term": {"deleted": True}}]}}
    try:
        resp = client.search(index=read_alias("edges", tenant), query=query, size=_PAGE, source=list(EDGE_FIELDS),
                             track_total_hits=True, ignore_unavailable=True)
    except NotFoundError:  # no edge index yet: nothing can be stale
        return
    shards = resp.get("_shards") or {}
    if shards.get("failed"):
        raise StaleEdgeSearchFailed(f"edge search failed on {shards['failed']} shard(s): {shards.get('failures')}")
    hits = resp["hits"]["hits"]
    total = resp["hits"]["total"]
    if total.get("relation") != "eq" or total["value"] > len(hits):
        if len(sources) == 1:
            raise StaleEdgeSearchFailed(f"{sources[0]} has more than {_PAGE} edges in the index")
        half = len(sources) // 2
        yield from _edges_of(client, tenant, sources[:half])
        yield from _edges_of(client, tenant, sources[half:])
        return
    for hit in hits:
        yield {"_id": hit["_id"], **hit.get("_source", {})}


def stale_edge_tombstones(client: Elasticsearch, tenant: str, versions: Mapping[str, int],
                          keep: Mapping[str, set[str]]) -> list[tuple[dict[str, Any], int]]:
    """(tombstone document, version) for the live edges of the records ``versions`` names (key -> the current
    observation's version) whose ids are not in ``keep[key]``: each takes its record's version."""
    keys = sorted(versions)
    out: list[tuple[dict[str, Any], int]] = []
    for start in range(0, len(keys), _CHUNK):
        for edge in _edges_of(client, tenant, keys[start:start + _CHUNK]):
            src = edge.get("src")
            if src not in versions or edge["_id"] in keep.get(src, ()):
                continue
            out.append(({**{f: edge.get(f) for f in EDGE_FIELDS}, "deleted": True}, versions[src]))
    return out
