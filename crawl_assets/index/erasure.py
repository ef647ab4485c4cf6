"""The erasure path: the only hard delete. Everything else marks deletions as tombstones.

Erasure removes documents by ``_id`` from every month of a tenant (the caller need not know where they
were routed). It does not touch the lake: erase the records there too, or the next re-index restores them.

Deletion is done client-side (``scan.delete_matching``: point in time, then bulk deletes), never with
``_delete_by_query``: that API lives in the ``reindex`` module, which some clusters lack or restrict.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Literal, NamedTuple

from elasticsearch import Elasticsearch

from crawl_assets.index.naming import check_family, read_alias
from crawl_assets.index.scan import bulk_write, delete_line, delete_matching, scan

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
    return delete_matching(client, alias, query)


class AuthorTerms(NamedTuple):
    """One person as the index finds them: their ``author_id`` on one ``platform``, their records' keys
    starting with ``key_prefix`` (the platform, and the site where ids are per site)."""

    author_id: str
    platform: str
    key_prefix: str


def selector_query(*, author: AuthorTerms | None = None, source: str | None = None, key_field: str = "key") -> dict:
    """The records of one person (their stable ``author_id`` on their platform and site, never a display
    name or a bare id: the same id on another platform is someone else) or of one source key.
    ``key_field``: the field holding the record key (``record_key`` in the features index)."""
    if source is not None:
        return {"term": {"source": source}}
    assert author is not None
    return {"bool": {"filter": [{"term": {"author_id": author.author_id}}, {"term": {"platform": author.platform}},
                                {"prefix": {key_field: author.key_prefix}}]}}


def records_with_author_id(client: Elasticsearch, tenant: str, author_id: str) -> Iterator[dict[str, Any]]:
    """``platform``, ``key`` and ``author_id`` of the tenant's records whose ``author_id`` is ``author_id``, on
    any platform (what a bare id may mean; nothing when the tenant has no index)."""
    for page in scan(client, read_alias("records", tenant), {"term": {"author_id": author_id}},
                     source=["platform", "key", "author_id"]):
        yield from (hit.source or {} for hit in page)


def erase_matching(client: Elasticsearch, tenant: str, query: dict) -> tuple[set[str], int]:
    """Hard-delete the tenant's records matching ``query`` and the edges that start at them, found in
    the index itself, so an erasure whose lake step already ran (an interrupted one, or one run first
    without a cluster) still empties the index. Returns (record ids deleted, edges deleted)."""
    deleted: set[str] = set()
    edges = 0
    for page in scan(client, read_alias("records", tenant), query):
        ids = [hit.id for hit in page]
        edges += _delete_where(client, read_alias("edges", tenant), {"terms": {"src": ids}})  # edges first: a
        # crash in between leaves records whose edges are gone, which the next erasure finds again
        bulk_write(client, [delete_line(hit.index, hit.id) for hit in page])
        deleted.update(ids)
    if deleted:
        client.indices.refresh(index=read_alias("records", tenant), ignore_unavailable=True)
    return deleted, edges


FEATURES_FAMILY = "features"
TENANT_FEATURE_KINDS = ("cluster", "trend", "account", "topic", "coordination_group", "coordination_edge")  # tenant-wide documents, rebuilt by the next enrichment


def erase_feature_documents(client: Elasticsearch, tenant: str, keys: set[str], *,
                            author: AuthorTerms | None = None, source: str | None = None) -> int:
    """Hard-delete the enrichment features of the erased records (``{enricher}:{key}``), of the author or
    source, and every tenant-wide feature document of the tenant (sent again by the next enrichment run)."""
    alias = read_alias(FEATURES_FAMILY, tenant)
    deleted = _delete_where(client, alias, {"terms": {"kind": list(TENANT_FEATURE_KINDS)}})
    ordered = sorted(keys)
    for start in range(0, len(ordered), _CHUNK):
        deleted += _delete_where(client, alias, {"terms": {"record_key": ordered[start:start + _CHUNK]}})
    if author is not None:
        deleted += _delete_where(client, alias, selector_query(author=author, key_field="record_key"))
    if source is not None:
        deleted += _delete_where(client, alias, selector_query(source=source))
    return deleted
