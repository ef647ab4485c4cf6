"""Where features live in the lake, apart from raw observations and normalized records:

    features/{enricher}/{tenant}/{platform}/{source}/{batch}.parquet   rows of one normalized part
    features/{enricher}/{tenant}/_tenant/{table}.parquet               a tenant-wide table (clusters, ...)
    features/{enricher}/{tenant}/_state/{table}.parquet                a tenant-wide state kept across erasures
                                                                       (topic ids: no record, key, author or text)

Every file carries in its Parquet metadata the enricher stamp that wrote it (``crawl_assets.deriver``, as the
lake's other derived parts) and, for a part, the version of the normalized part it was read from
(``crawl_assets.records``): a part is current when both match, so a new enricher stamp or a re-derived
normalized part makes it pending again, and nothing else does. Names come from validated partition keys and
the fixed enricher names; ``_tenant`` cannot be a platform name.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from crawl_assets.lake import Lake
from crawl_assets.lake.layout import FEATURES

AREA = FEATURES
TENANT_DIR = "_tenant"
STATE_DIR = "_state"
RECORDS_TABLE = "normalized_records"
STAMP_KEY = b"crawl_assets.deriver"
RECORDS_KEY = b"crawl_assets.records"
GENERATION_KEY = b"crawl_assets.generation"


def source_dir(name: str, tenant: str, platform: str, source: str) -> str:
    return f"{AREA}/{name}/{tenant}/{platform}/{source}"


def part_path(name: str, tenant: str, platform: str, source: str, batch_id: str) -> str:
    return f"{source_dir(name, tenant, platform, source)}/{batch_id}.parquet"


def marker_path(name: str, tenant: str, platform: str, source: str, batch_id: str) -> str:
    """The index marker of a feature part (``crawl_assets.enrich.index``)."""
    return f"{source_dir(name, tenant, platform, source)}/_indexed/{batch_id}.done"


def tenant_path(name: str, tenant: str, table: str) -> str:
    return f"{AREA}/{name}/{tenant}/{TENANT_DIR}/{table}.parquet"


def state_path(name: str, tenant: str, table: str) -> str:
    return f"{AREA}/{name}/{tenant}/{STATE_DIR}/{table}.parquet"


def footer(lake: Lake, relative: str) -> dict[bytes, bytes] | None:
    """The Parquet key/value metadata of a lake file; None when it does not exist, empty when it is not
    readable Parquet (a damaged part is then pending, and its read reports why)."""
    try:
        with lake.open_read(relative) as fh:
            return dict(pq.read_schema(fh).metadata or {})
    except FileNotFoundError:
        return None
    except (pa.ArrowInvalid, OSError):
        return {}


def _ids(lake: Lake, pattern: str) -> list[str]:
    return sorted(p.rsplit("/", 1)[1].removesuffix(".parquet") for p in lake.glob(pattern))


@dataclass(frozen=True)
class PartState:
    batch_id: str
    records_version: str  # the normalized part's deriver version
    current: bool  # a feature part exists for this stamp and this normalized part


def part_states(lake: Lake, name: str, stamp: str, tenant: str, platform: str, source: str) -> list[PartState]:
    """Every normalized part of the source (collection order), and whether its features are current."""
    out = []
    for batch_id in lake.part_ids(RECORDS_TABLE, tenant, platform, source):
        records = footer(lake, lake.table_part(RECORDS_TABLE, tenant, platform, source, batch_id)) or {}
        version = records.get(STAMP_KEY, b"").decode()
        mine = footer(lake, part_path(name, tenant, platform, source, batch_id)) or {}
        current = mine.get(STAMP_KEY) == stamp.encode() and mine.get(RECORDS_KEY) == version.encode()
        out.append(PartState(batch_id, version, current))
    return out


def orphan_parts(lake: Lake, name: str, tenant: str, platform: str, source: str) -> list[str]:
    """Feature parts whose normalized part is gone (erased, expired, rewritten under a new batch id)."""
    records = set(lake.part_ids(RECORDS_TABLE, tenant, platform, source))
    return [b for b in _ids(lake, f"{source_dir(name, tenant, platform, source)}/*.parquet") if b not in records]


def write_part(lake: Lake, relative: str, table: pa.Table, *, stamp: str, records_version: str) -> None:
    meta = {**(table.schema.metadata or {}), RECORDS_KEY: records_version.encode()}
    lake.write_part(relative, table.replace_schema_metadata(meta), version=stamp)


def write_tenant_table(lake: Lake, relative: str, table: pa.Table, *, stamp: str, generation: str) -> None:
    meta = {**(table.schema.metadata or {}), GENERATION_KEY: generation.encode()}
    lake.write_part(relative, table.replace_schema_metadata(meta), version=stamp)


def remove(lake: Lake, relative: str) -> bool:
    return lake.remove(relative) > 0


def remove_part(lake: Lake, name: str, tenant: str, platform: str, source: str, batch_id: str) -> bool:
    """A feature part and its index marker gone; whether the part existed."""
    remove(lake, marker_path(name, tenant, platform, source, batch_id))
    return remove(lake, part_path(name, tenant, platform, source, batch_id))


def read_table(lake: Lake, relative: str, columns: list[str] | None = None) -> pa.Table | None:
    try:
        with lake.open_read(relative) as fh:
            return pq.read_table(fh, columns=columns)
    except FileNotFoundError:
        return None


def tenant_parts(lake: Lake, name: str, tenant: str) -> list[str]:
    """Relative paths of every feature part of the tenant (all platforms and sources), in a stable order."""
    return [p for p in lake.glob(f"{AREA}/{name}/{tenant}/*/*/*.parquet") if p.split("/")[-3] != TENANT_DIR]


def read_parts(lake: Lake, paths: list[str], columns: list[str] | None = None) -> Iterator[tuple[str, pa.Table]]:
    for relative in paths:
        table = read_table(lake, relative, columns)
        if table is not None:
            yield relative, table


def feature_tenants(lake: Lake, name: str) -> list[str]:
    """Tenants with features of enricher ``name``."""
    return sorted(p.rsplit("/", 1)[1] for p in lake.glob(f"{AREA}/{name}/*"))


def source_folders(lake: Lake, tenant: str) -> list[str]:
    """The feature folders of the tenant's sources, all enrichers (relative, ``{AREA}/{name}/{tenant}/{p}/{s}``)."""
    return [p for p in lake.glob(f"{AREA}/*/{tenant}/*/*") if p.split("/")[-2] != TENANT_DIR and lake.is_dir(p)]


def remove_tenant_tables(lake: Lake, name: str, tenant: str) -> int:
    """The tenant-wide tables of enricher ``name`` removed (their folder with them); how many there were."""
    folder = f"{AREA}/{name}/{tenant}/{TENANT_DIR}"
    tables = len(lake.glob(f"{folder}/*.parquet"))
    lake.remove_tree(folder)
    return tables
