"""The erasure path: the only hard delete. Everything else marks deletions as tombstones.

Erasure removes documents by ``_id`` from every month of a tenant (the caller need not know where they
were routed). It does not touch the lake: erase the records there too, or the next re-index restores them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.index.naming import check_family, read_alias

_CHUNK = 1000


def erase_documents(client: Elasticsearch, tenant: str, ids: Iterable[str],
                    family: Literal["records", "edges", "authors"] = "records") -> int:
    """Hard-delete documents by ``_id`` (record keys) from all of a tenant's indices; returns how many."""
    check_family(family)
    wanted = list(dict.fromkeys(ids))
    deleted = 0
    for start in range(0, len(wanted), _CHUNK):
        deleted += _delete_where(client, read_alias(family, tenant), {"ids": {"values": wanted[start:start + _CHUNK]}})
    return deleted


def _delete_where(client: Elasticsearch, alias: str, query: dict) -> int:
    """Hard-delete what ``query`` matches under ``alias`` (none when the alias has no index yet)."""
    try:
        resp = client.delete_by_query(index=alias, query=query, refresh=True, conflicts="proceed",
                                      ignore_unavailable=True)
    except NotFoundError:
        return 0
    return int(resp.get("deleted", 0))


def selector_query(*, author: str | None = None, source: str | None = None) -> dict:
    """The records of one author (their stable ``author_id``, never a display name) or of one source key."""
    if source is not None:
        return {"term": {"source": source}}
    assert author is not None
    return {"term": {"author_id": author}}


def erase_matching(client: Elasticsearch, tenant: str, query: dict) -> tuple[set[str], int]:
    """Hard-delete the tenant's records matching ``query`` and the edges that start at them, found in
    the index itself, so an erasure whose lake step already ran (an interrupted one, or one run first
    without a cluster) still empties the index. Returns (record ids deleted, edges deleted)."""
    deleted: set[str] = set()
    edges = 0
    while True:
        try:
            resp = client.search(index=read_alias("records", tenant), query=query, size=_CHUNK, source=False,
                                 ignore_unavailable=True)
        except NotFoundError:
            return deleted, edges
        ids = [hit["_id"] for hit in resp["hits"]["hits"] if hit["_id"] not in deleted]
        if not ids:
            return deleted, edges
        edges += _delete_where(client, read_alias("edges", tenant), {"terms": {"src": ids}})  # ids: one page
        erase_documents(client, tenant, ids, family="records")
        deleted.update(ids)
