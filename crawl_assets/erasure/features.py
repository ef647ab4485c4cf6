"""Erasure of enrichment features (``crawl_assets.enrich``): derived from records, so they go with them.

Lake: the personal-data findings of the erased records are counted by type first (the erasure report says
what kinds of personal data the erasure removed, never the values); then every feature part whose normalized
part is gone (erased, or rewritten under a new batch id) is removed, with its index marker, and the tenant's
tenant-wide tables (clusters, trends, accounts) and their index state: they mix every record of the tenant,
and the next enrichment run rebuilds them from what remains (an erased record's rewritten batch is enriched
again then too).

Index: ``crawl_assets.index.erasure.erase_feature_documents``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from crawl_assets.enrich import ENRICHERS, store
from crawl_assets.lake import Lake


@dataclass
class FeatureErasure:
    personal_data: dict[str, int] = field(default_factory=dict)  # span type -> findings in erased records
    parts_removed: int = 0
    tenant_tables_removed: int = 0


def personal_data_found(lake: Lake, tenant: str, keys: set[str]) -> dict[str, int]:
    """Personal-data findings (spans) by type in the latest feature rows of ``keys``."""
    counts: Counter[str] = Counter()
    if not keys:
        return {}
    for _, rows in store.read_parts(lake, store.tenant_parts(lake, "personal_data", tenant)):
        for key, spans in zip(rows.column("key").to_pylist(), rows.column("spans").to_pylist()):
            if key in keys:
                counts.update(s["type"] for s in spans)
    return dict(sorted(counts.items()))


def _source_dirs(lake: Lake, tenant: str) -> list[tuple[str, str, str]]:
    """(enricher, platform, source) of every feature folder of the tenant."""
    out = []
    for path in store.source_folders(lake, tenant):
        name, _, platform, source = path.split("/")[-4:]
        if name in ENRICHERS:
            out.append((name, platform, source))
    return sorted(out)


def erase_feature_files(lake: Lake, tenant: str, keys: set[str]) -> FeatureErasure:
    """The lake side (see the module docstring); call it after the records' parts were erased or rewritten."""
    out = FeatureErasure(personal_data=personal_data_found(lake, tenant, keys))
    for name, platform, source in _source_dirs(lake, tenant):
        for batch_id in store.orphan_parts(lake, name, tenant, platform, source):
            out.parts_removed += store.remove_part(lake, name, tenant, platform, source, batch_id)
    for name in ENRICHERS:
        out.tenant_tables_removed += store.remove_tenant_tables(lake, name, tenant)
    return out
