"""Read-side figures: document counts per tenant/source (for asset checks) and per-index stats (for the CLI)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from elasticsearch import Elasticsearch, NotFoundError

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
