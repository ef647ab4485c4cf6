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
        chunk = wanted[start:start + _CHUNK]
        try:
            resp = client.delete_by_query(index=read_alias(family, tenant), query={"ids": {"values": chunk}},
                                          refresh=True, conflicts="proceed", ignore_unavailable=True)
        except NotFoundError:
            return deleted
        deleted += int(resp.get("deleted", 0))
    return deleted
