"""Our indices on a cluster: their setup (templates, per-tenant read aliases, month indices, refresh during a
load), retention by whole months, and what the write side reads back from them (document counts for the index
stage's checks, per-index figures for the CLI, the stale edges of records seen again). The API's queries are
``crawl_assets.query``.

Setup is idempotent: running it again changes nothing. Retention needs no ILM: an index holds exactly one month
of one tenant, so expiring data is deleting whole indices, never delete-by-query.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import resources
from typing import Any, Literal

from elasticsearch import BadRequestError, Elasticsearch, NotFoundError

from crawl_assets.index.naming import (FAMILIES, MONTHLY, by_logical, check_family, check_tenant, family_alias,
                                      index_pattern, parse_physical, read_alias, template_name)
from crawl_assets.index.documents import EDGE_FIELDS, LEMMA_META
from crawl_assets.index.migrate import MigrationReport, migrate_index
from crawl_assets.persian.lemma import LEMMA_VERSION

log = logging.getLogger(__name__)


def load_template(family: str) -> dict[str, Any]:
    """The shipped index template body of a family (``crawl_assets/index/templates/{family}.json``)."""
    text = resources.files("crawl_assets.index").joinpath("templates", f"{family}.json").read_text("utf-8")
    body = json.loads(text)
    # Names come from this deployment's prefix, never from the JSON: the family's indices, its cross-tenant alias.
    body["index_patterns"] = [index_pattern(family)]
    if family != "features":
        body["template"]["aliases"] = {family_alias(family): {}}
    if family == "records":  # each index remembers which lemmatizer made its text_lemma
        body["template"]["mappings"]["_meta"] = {LEMMA_META: LEMMA_VERSION}
    return body


def put_template(client: Elasticsearch, family: str) -> None:
    body = load_template(family)
    client.indices.put_index_template(
        name=template_name(family), index_patterns=body["index_patterns"], template=body["template"],
        priority=body.get("priority"), version=body.get("version"), meta=body.get("_meta"),
    )


def ensure_template(client: Elasticsearch, family: str) -> None:
    """Install the family's template when the cluster has none (the sink calls this before auto-creating)."""
    if not client.indices.exists_index_template(name=template_name(family)):
        put_template(client, family)


def ensure_index(client: Elasticsearch, index: str, family: str, tenant: str,
                 settings: dict[str, Any] | None = None) -> bool:
    """Create ``index`` (mappings from the template, ``settings`` over the template's) with the tenant's read
    alias; add the alias if it exists. True when it was created here (``settings`` then apply).

    A name that is an alias already is a reindexed index (``generations``): its aliases are the reindex's."""
    alias = read_alias(family, tenant)
    try:
        client.indices.create(index=index, aliases={alias: {}}, settings=settings)
        return True
    except BadRequestError as exc:
        if exc.error == "invalid_index_name_exception" and "exists as alias" in str(_reason(exc)):
            return False
        if exc.error != "resource_already_exists_exception":
            raise
        client.indices.put_alias(index=index, name=alias)
        return False


def template_refresh(family: str) -> str | None:
    """The refresh interval a family's template sets (None: the cluster's default)."""
    return load_template(family)["template"]["settings"].get("index", {}).get("refresh_interval")


def set_refresh(client: Elasticsearch, indices: list[str], interval: str | None) -> None:
    """Set the refresh interval of ``indices`` (``"-1"``: off; None: the cluster's default)."""
    if indices:
        client.indices.put_settings(index=",".join(indices), settings={"index": {"refresh_interval": interval}})


def restore_refresh(client: Elasticsearch, tenant: str, families: Iterable[str] = sorted(MONTHLY)) -> list[str]:
    """Turn refresh back on where a load left it off (a crash before the load restored it): the tenant's
    indices with ``refresh_interval: -1`` get their template's interval again. Returns their names."""
    restored = []
    for family in families:
        found = client.indices.get_settings(index=index_pattern(family, tenant), name="index.refresh_interval",
                                            flat_settings=True, allow_no_indices=True, ignore_unavailable=True).body
        off = sorted(name for name, entry in found.items() if parse_physical(name)
                     and str(entry.get("settings", {}).get("index.refresh_interval")) == "-1")
        set_refresh(client, off, template_refresh(family))
        restored += off
    if restored:
        log.info("refresh turned back on for %s (a load stopped before it restored them)", ", ".join(restored))
    return restored


def _reason(exc: BadRequestError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    return str((body.get("error") or {}).get("reason", exc.message))


def tenant_indices(client: Elasticsearch, family: str, tenant: str) -> dict[str, dict[str, Any]]:
    """Our concrete indices of a tenant and family (reindexed generations too), with their aliases."""
    found = client.indices.get_alias(index=index_pattern(family, tenant), allow_no_indices=True,
                                     ignore_unavailable=True).body
    out = {}
    for name, info in found.items():
        parsed = parse_physical(name)
        if parsed and parsed[0] == family and parsed[1] == tenant:
            out[name] = info.get("aliases", {})
    return out


@dataclass
class SetupReport:
    templates: list[str] = field(default_factory=list)
    aliases_added: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    migration: MigrationReport = field(default_factory=MigrationReport)


def setup_indices(client: Elasticsearch, tenants: Iterable[str],
                  retention_months: dict[str, int] | None = None, *, now: datetime | None = None,
                  dry_run: bool = False) -> SetupReport:
    """Put the templates, give every existing index of each tenant its read alias, apply retention.

    ``retention_months`` maps a tenant to the number of months it keeps (the current month counts);
    tenants not in it keep everything. Idempotent.
    """
    report = SetupReport()
    for family in FAMILIES:
        if not dry_run:
            put_template(client, family)
        report.templates.append(template_name(family))
    for tenant in sorted(set(tenants)):
        check_tenant(tenant)
        for family in FAMILIES:
            alias = read_alias(family, tenant)
            found = tenant_indices(client, family, tenant)
            for logical, names in by_logical(found).items():
                if len(names) > 1:  # a reindex not finished: its aliases are its own
                    report.migration.in_progress.append(logical)
                    continue
                [name] = names
                if alias not in found[name]:
                    if not dry_run:
                        client.indices.put_alias(index=name, name=alias)
                    report.aliases_added.append(f"{name} -> {alias}")
                migrate_index(client, name, family, tenant, load_template(family)["template"], report.migration,
                              dry_run=dry_run)
        keep = (retention_months or {}).get(tenant)
        if keep:
            report.deleted += delete_expired_months(client, tenant, keep, now=now, dry_run=dry_run)
    return report


def _month_number(month: str) -> int:
    year, mon = month.split(".")
    return int(year) * 12 + int(mon) - 1


def expired_months(months: Iterable[str], keep: int, now: datetime) -> list[str]:
    """Months (``YYYY.MM``) outside the ``keep`` most recent calendar months ending with ``now``'s month."""
    if keep < 1:
        raise ValueError("retention must keep at least one month")
    current = now.year * 12 + now.month - 1
    return sorted(m for m in months if current - _month_number(m) >= keep)


def delete_expired_months(client: Elasticsearch, tenant: str, keep: int, *, now: datetime | None = None,
                          dry_run: bool = False) -> list[str]:
    """Delete a tenant's monthly indices older than ``keep`` months; returns the deleted (or due) names."""
    now = now or datetime.now(timezone.utc)
    doomed: list[str] = []
    for family in sorted(MONTHLY):
        by_month: dict[str, list[str]] = {}
        for name in tenant_indices(client, family, tenant):
            month = parse_physical(name)[2]  # type: ignore[index]
            if month is not None:  # the undated index is never expired by month
                by_month.setdefault(month, []).append(name)
        doomed += [name for m in expired_months(by_month, keep, now) for name in sorted(by_month[m])]
    for name in doomed:
        if dry_run:
            continue
        try:
            client.indices.delete(index=name)
            log.info("retention: deleted %s", name)
        except NotFoundError:
            pass
    return doomed


# Read back

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


# Stale edges: those a record no longer has. When a newer observation of a record drops a hashtag, a mention
# or a reply target, its old edge documents become tombstones (``deleted: true``) carrying the newer
# observation's external version, so an edge sent again from an older observation (a backfill, another source
# holding the record) is a version conflict, a no-op; a later observation that has the edge again overwrites
# the tombstone. A hard delete would keep its version only for ``index.gc_deletes`` (60 s by default); only
# erasure hard-deletes.

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
