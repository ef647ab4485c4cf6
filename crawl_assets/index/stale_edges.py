"""Edges a record no longer has: when a newer observation of an indexed record drops a hashtag, a
mention or a reply target, its old edge documents must go, or the index keeps a relation the lake's
``relation_edges`` table no longer holds. Only re-observed records are checked (a record seen for the
first time has no old edges). An edge is not a user's deletion, so this is not a tombstone case: the
edge simply is not true of the current record any more.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.index.naming import read_alias

_CHUNK = 500


def prune_stale_edges(client: Elasticsearch, tenant: str, edges_by_src: Mapping[str, Iterable[str]]) -> int:
    """Delete the tenant's edge documents whose ``src`` is one of ``edges_by_src`` and whose ``_id`` is
    not among that record's current edge ids; returns how many were deleted."""
    sources = sorted(edges_by_src)
    deleted = 0
    for start in range(0, len(sources), _CHUNK):
        chunk = sources[start:start + _CHUNK]
        keep = sorted({i for src in chunk for i in edges_by_src[src]})
        query = {"bool": {"filter": [{"terms": {"src": chunk}}], "must_not": [{"ids": {"values": keep}}]}}
        try:
            resp = client.delete_by_query(index=read_alias("edges", tenant), query=query, refresh=True,
                                          conflicts="proceed", ignore_unavailable=True)
        except NotFoundError:
            return deleted
        deleted += int(resp.get("deleted", 0))
    return deleted
