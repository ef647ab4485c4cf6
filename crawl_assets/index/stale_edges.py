"""Edges a record no longer has: when a newer observation of a record drops a hashtag, a mention or a
reply target, its old edge documents must stop counting, or the index keeps a relation the lake's
``relation_edges`` table no longer holds.

They become tombstones (``deleted: true``), not hard deletes: a tombstone carries the newer
observation's external version (in its action line, as every edge does), so an edge sent again from an
older observation (a backfill, another source holding the same record) is a version conflict, a no-op, and cannot bring the edge back; a
later observation that has the edge again overwrites the tombstone. (A hard delete would keep its
version only for ``index.gc_deletes``, 60 s by default.) Only the erasure path hard-deletes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.index.documents import EDGE_FIELDS
from crawl_assets.index.naming import read_alias

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
