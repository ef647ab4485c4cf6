"""Cluster setup: index templates, per-tenant read aliases, month indices, and retention by whole months.

Everything here is idempotent: running it again changes nothing. Retention needs no ILM: an index holds
exactly one month of one tenant, so expiring data is deleting whole indices, never delete-by-query.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import resources
from typing import Any

from elasticsearch import BadRequestError, Elasticsearch, NotFoundError

from crawl_assets.index.naming import (FAMILIES, MONTHLY, by_logical, check_tenant, family_alias, index_pattern,
                                      parse_physical, read_alias, template_name)
from crawl_assets.index.documents import LEMMA_META
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
