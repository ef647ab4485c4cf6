"""Erasing a tenant named under the earlier rule (``acme-``, ``a--b``: a slug, but no longer a valid tenant
name, see ``crawl_assets.core.names``). Its registry entries are now invalid (skipped with a warning), so it
is never synced again and its data cannot be selected by ``--author`` or ``--source``; the way out is to
erase all of it: every lake folder of the tenant, and its indices (named by the earlier scheme, which
``es setup`` cannot rename for it). Then remove its entries from the registry (or re-add them under a valid
tenant name and sync again)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from elasticsearch import Elasticsearch

from crawl_assets.core import names
from crawl_assets.erasure.log import erasure_key, subject_digest
from crawl_assets.lake import Lake


@dataclass
class LegacyTenantErasure:
    tenant: str
    folders_removed: list[str] = field(default_factory=list)
    indices_deleted: list[str] = field(default_factory=list)
    index_erased: bool = False
    log: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def check_legacy_tenant(tenant: str) -> str:
    """``tenant`` when the earlier rule allowed it and the current one does not, else ValueError saying why."""
    if names.is_tenant(tenant):
        raise ValueError(f"{tenant!r} is a valid tenant name: erase with --tenant {tenant} --source KEY or --author ID")
    if not names.is_slug(tenant):
        raise ValueError(f"invalid legacy tenant {tenant!r}: {names.SLUG_RULE}")
    return tenant


def erase_legacy_tenant(lake: Lake, client: Elasticsearch | None, tenant: str, *,
                        now: datetime | None = None) -> LegacyTenantErasure:
    """Remove every lake folder of the legacy-named ``tenant`` and (with a client) its indices; log it."""
    from crawl_assets.index.legacy_names import delete_legacy_indices

    out = LegacyTenantErasure(check_legacy_tenant(tenant))
    key = erasure_key(lake)  # before anything goes: an erasure that could not be logged does not start
    out.folders_removed = lake.remove_tenant(tenant)
    if client is not None:
        out.indices_deleted = delete_legacy_indices(client, [tenant])
        out.index_erased = True
    out.log = lake.append_erasure_log(tenant, {
        "at": (now or datetime.now(timezone.utc)).isoformat(), "tenant": tenant, "by": "legacy_tenant",
        "subject": subject_digest(tenant, tenant, key), "folders_removed": len(out.folders_removed),
        "indices_deleted": len(out.indices_deleted), "index_erased": out.index_erased})
    return out
