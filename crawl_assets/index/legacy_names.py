"""Rename indices of the earlier naming scheme (``crawl-{family}-{tenant}-{suffix}``) to the current one
(``crawl-{family}-{tenant}.{suffix}``, see ``naming``), client-side: no ``_reindex`` (not every cluster has
the module), just searches and bulk writes any node serves.

For each legacy index of a tenant: create the new index (with the tenant's read alias), copy every
document from one point in time (``scan.copy_documents``), each with its own ``_version`` as an
``external`` version, so a copy is idempotent (a crash mid-way is finished by running it again) and
never overwrites a newer document a sync already wrote to the new index; then delete the legacy index.
While a migration runs the read alias covers both indices (a search may see a document twice).
``crawl-assets es setup`` runs it for the tenants it sets up.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from elasticsearch import Elasticsearch

from crawl_assets.core import names
from crawl_assets.index.indices import ensure_index
from crawl_assets.index.scan import BulkWriteFailed, copy_documents
from crawl_assets.index.naming import FAMILIES, index_name, parse_legacy_index, prefix, read_alias

log = logging.getLogger(__name__)


class MigrationError(RuntimeError):
    """A document could not be copied; the legacy index is kept (run the migration again)."""


@dataclass
class RenameReport:
    renamed: list[str] = field(default_factory=list)  # "old -> new"
    documents: int = 0
    skipped: list[str] = field(default_factory=list)  # legacy indices whose tenant name is no longer valid


def legacy_indices(client: Elasticsearch, tenants: Iterable[str] | None = None) -> dict[str, tuple[str, str, str | None]]:
    """Legacy-named concrete indices (of ``tenants``, or of everyone) with their (family, tenant, month)."""
    wanted = None if tenants is None else set(tenants)
    found: dict[str, tuple[str, str, str | None]] = {}
    for family in FAMILIES:
        listing = client.indices.get_alias(index=f"{prefix()}-{family}-*", allow_no_indices=True,
                                           ignore_unavailable=True, expand_wildcards="open,closed").body
        for name in listing:
            parsed = parse_legacy_index(name)
            if parsed and parsed[0] == family and (wanted is None or parsed[1] in wanted):
                found[name] = parsed
    return dict(sorted(found.items()))


def delete_legacy_indices(client: Elasticsearch, tenants: Iterable[str]) -> list[str]:
    """Delete every legacy-named index of ``tenants`` (erasure of a tenant named under the earlier rule);
    the names deleted."""
    deleted = []
    for index in legacy_indices(client, tenants):
        client.indices.delete(index=index, ignore_unavailable=True)
        deleted.append(index)
    return deleted


def copy_index(client: Elasticsearch, source: str, target: str) -> int:
    """Copy every document of ``source`` into ``target`` keeping ids, sources and versions; the count copied
    (documents ``target`` already holds in a newer or the same version are left as they are)."""
    try:
        return copy_documents(client, source, target)[0]
    except BulkWriteFailed as exc:
        raise MigrationError(f"copying {source} -> {target}: {exc}") from exc


def migrate_legacy_indices(client: Elasticsearch, tenants: Iterable[str] | None = None, *,
                           dry_run: bool = False) -> RenameReport:
    """Rename every legacy index of ``tenants`` (None: of every tenant) to its current name.

    A legacy index named like one of these tenants' read aliases (tenant ``t``'s ``crawl-records-t-undated``
    is tenant ``t-undated``'s alias) is renamed too, and first: until it is, that alias cannot exist."""
    report = RenameReport()
    found = legacy_indices(client, tenants)
    blockers: set[str] = set()
    if tenants is not None:
        aliases = {read_alias(f, t) for f in FAMILIES for t in tenants if names.is_tenant(t)}
        blockers = {n for n in legacy_indices(client) if n in aliases}
        found.update({n: p for n, p in legacy_indices(client).items() if n in blockers})
    for old in sorted(found, key=lambda n: (n not in blockers, n)):
        family, tenant, month = found[old]
        if not names.is_tenant(tenant):
            report.skipped.append(old)
            log.warning("index %s: tenant %r is no longer a valid name; its data can only be erased: "
                        "crawl-assets erase --tenant %s --legacy-tenant", old, tenant, tenant)
            continue
        new = index_name(family, tenant, month)
        report.renamed.append(f"{old} -> {new}")
        if dry_run:
            continue
        ensure_index(client, new, family, tenant)
        report.documents += copy_index(client, old, new)
        client.indices.refresh(index=new)
        client.indices.delete(index=old)
        log.info("index %s renamed to %s", old, new)
    return report
