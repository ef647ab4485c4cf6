"""Run an enricher over one source's normalized parts (incremental) and, for tenant-wide enrichers, rebuild
the tenant's tables from every source's rows. Plain functions over a ``Lake``: the Dagster assets and the
CLI call them; nothing here imports Dagster.

Incremental: a normalized part is read only when its feature part is missing, was written by another
enricher stamp, or was read from an earlier version of the normalized part. Normalized records are only
ever read. One part that cannot be enriched is reported and the others go on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone

import pyarrow as pa

from crawl_assets import settings
from crawl_assets.enrich import store
from crawl_assets.enrich.base import CombineContext, Enricher
from crawl_assets.lake import Lake
from crawl_assets.locks.shared import acquire

LOCK_WAIT_SECONDS = 600.0


class TenantBusy(RuntimeError):
    """Another run is rebuilding the same tenant's tables of the same enricher."""


@dataclass
class SourceResult:
    """What one run over a source did (the asset's metadata)."""

    parts_enriched: list[str] = field(default_factory=list)
    parts_up_to_date: int = 0
    parts_removed: int = 0
    removed_keys: set[str] = field(default_factory=set)  # keys of removed parts (their documents may go)
    records_read: int = 0
    rows_written: int = 0
    failed: list[str] = field(default_factory=list)  # "batch: reason"
    tenant: "TenantResult | None" = None


@dataclass
class TenantResult:
    generation: str
    rebuilt: bool
    rows: dict[str, int] = field(default_factory=dict)
    parts: int = 0


def enrich_source(lake: Lake, enricher: Enricher, tenant: str, platform: str, source: str, *,
                  now: datetime | None = None, combine: bool = True) -> SourceResult:
    """Enrich the source's pending parts; drop feature parts whose normalized part is gone; for a
    tenant-wide enricher, rebuild the tenant's tables when any of their inputs changed (unless ``combine``
    is false: the Dagster assets rebuild them once after a batch of sources, ``combine_tenants``)."""
    result = SourceResult()
    for state in store.part_states(lake, enricher.name, enricher.stamp, tenant, platform, source):
        if state.current:
            result.parts_up_to_date += 1
            continue
        try:
            records = next(t for _, t in lake.read_parts(store.RECORDS_TABLE, tenant, platform, source,
                                                         columns=list(enricher.columns),
                                                         include=state.batch_id.__eq__))
            rows = enricher.extract(records)
            store.write_part(lake, store.part_path(enricher.name, tenant, platform, source, state.batch_id), rows,
                             stamp=enricher.stamp, records_version=state.records_version)
        except Exception as exc:  # noqa: BLE001 - one part never blocks the source's other parts
            result.failed.append(f"{state.batch_id}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
            continue
        result.parts_enriched.append(state.batch_id)
        result.records_read += records.num_rows
        result.rows_written += rows.num_rows
    for batch_id in store.orphan_parts(lake, enricher.name, tenant, platform, source):
        relative = store.part_path(enricher.name, tenant, platform, source, batch_id)
        if enricher.scope == "record":
            gone = store.read_table(lake, relative, columns=["key"])
            result.removed_keys.update(gone.column("key").to_pylist() if gone is not None else ())
        result.parts_removed += store.remove_part(lake, enricher.name, tenant, platform, source, batch_id)
    if enricher.scope == "tenant" and combine:
        result.tenant = combine_tenant(lake, enricher, tenant, now=now)
    return result


def combine_tenants(lake: Lake, enricher: Enricher, *, now: datetime | None = None) -> dict[str, TenantResult]:
    """``combine_tenant`` for every tenant with features of ``enricher``: each tenant's tables rebuilt once
    if any of their inputs changed since they were built, left as they are otherwise."""
    return {tenant: combine_tenant(lake, enricher, tenant, now=now)
            for tenant in store.feature_tenants(lake, enricher.name)}


def inputs_generation(lake: Lake, enricher: Enricher, paths: list[str]) -> str:
    """Identity of a tenant table's inputs: the enricher stamp and, per feature part, its path, stamp and
    the normalized version it was read from (parts are deterministic in those)."""
    digest = hashlib.sha256(enricher.stamp.encode())
    for relative in paths:
        meta = store.footer(lake, relative) or {}
        digest.update(b"\0" + relative.encode() + b"\0" + meta.get(store.STAMP_KEY, b"") + b"\0" +
                      meta.get(store.RECORDS_KEY, b""))
    return digest.hexdigest()[:16]


@contextmanager
def tenant_lock(name: str, tenant: str, wait_seconds: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """One rebuild of a tenant's tables of one enricher at a time (two sources of a tenant may finish
    together); the last one to take the lock reads every part the other wrote."""
    lock = acquire(f"enrich:{tenant}.{name}", settings.dagster_home() / "locks" / "enrich" / f"{tenant}.{name}.lock",
                   wait_seconds)
    if lock is None:
        raise TenantBusy(f"tenant {tenant!r}: {name} tables are being rebuilt by another run")
    try:
        yield
    finally:
        lock.release()


def tenant_tables_current(lake: Lake, enricher: Enricher, tenant: str, tables: list[str], generation: str) -> bool:
    for table in tables:
        meta = store.footer(lake, store.tenant_path(enricher.name, tenant, table))
        if meta is None or meta.get(store.STAMP_KEY) != enricher.stamp.encode() or \
                meta.get(store.GENERATION_KEY) != generation.encode():
            return False
    return True


def combine_tenant(lake: Lake, enricher: Enricher, tenant: str, *, now: datetime | None = None,
                   force: bool = False) -> TenantResult:
    """Rebuild the tenant's tables of a tenant-wide enricher from all its feature parts, unless they were
    built from exactly these inputs already."""
    with tenant_lock(enricher.name, tenant):
        paths = store.tenant_parts(lake, enricher.name, tenant)
        generation = inputs_generation(lake, enricher, paths)
        names = list(getattr(enricher, "tables", ()))
        if not force and names and tenant_tables_current(lake, enricher, tenant, names, generation):
            return TenantResult(generation, rebuilt=False, parts=len(paths))
        context = CombineContext(tenant=tenant, generated_at=now or datetime.now(timezone.utc),
                                 previous=_previous(lake, enricher, tenant))
        columns = list(enricher.combine_columns) if enricher.combine_columns else None
        tables = enricher.combine((t for _, t in store.read_parts(lake, paths, columns)), context)
        for table_name in enricher.state_tables:
            if table_name in tables:
                store.write_tenant_table(lake, store.state_path(enricher.name, tenant, table_name),
                                         tables.pop(table_name), stamp=enricher.stamp, generation=generation)
        for table_name, table in tables.items():
            store.write_tenant_table(lake, store.tenant_path(enricher.name, tenant, table_name), table,
                                     stamp=enricher.stamp, generation=generation)
        if _inputs_gone(lake, paths):
            # an erasure removed a part while we read it (it removes the tables after the parts): what we
            # wrote may hold the erased records, so it goes; the next run rebuilds from what remains
            for table_name in tables:
                store.remove(lake, store.tenant_path(enricher.name, tenant, table_name))
            return TenantResult(generation, rebuilt=False, parts=len(paths))
        return TenantResult(generation, rebuilt=True, rows={k: v.num_rows for k, v in tables.items()},
                            parts=len(paths))


def _previous(lake: Lake, enricher: Enricher, tenant: str) -> dict[str, pa.Table]:
    """The tables ``enricher`` left last time that it reads back (``previous_tables``, ``state_tables``)."""
    wanted = [(t, store.tenant_path(enricher.name, tenant, t)) for t in enricher.previous_tables]
    wanted += [(t, store.state_path(enricher.name, tenant, t)) for t in enricher.state_tables]
    return {name: table for name, relative in wanted if (table := store.read_table(lake, relative)) is not None}


def _inputs_gone(lake: Lake, paths: list[str]) -> bool:
    """Whether the normalized part of any feature part in ``paths`` is gone."""
    for relative in paths:
        _, _, tenant, platform, source, name = relative.split("/")
        batch_id = name.removesuffix(".parquet")
        if not lake.exists(lake.table_part(store.RECORDS_TABLE, tenant, platform, source, batch_id)):
            return True
    return False


def read_tenant_table(lake: Lake, enricher: Enricher, tenant: str, table: str) -> pa.Table | None:
    return store.read_table(lake, store.tenant_path(enricher.name, tenant, table))
