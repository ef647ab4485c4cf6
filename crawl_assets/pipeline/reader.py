"""The normalized records read from the lake without Elasticsearch: one row per key, its latest observation.

A source's ``normalized_records`` folder holds one Parquet part per raw batch, and a record observed by several
syncs (edited, counters changed, deleted, re-read in the refresh window, or in two exports) has a row in each
of those parts: reading the folder gives more rows than records. The record is its latest observation (the
last part in collection order, the last row within it), a tombstone when it was deleted; the same choice the
index step makes (``pending_records``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets import settings
from crawl_assets.lake import Lake
from crawl_assets.lake.layout import table_dir
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE


def sources_with_records(lake: Lake, tenant: str, platform: str | None = None, source: str | None = None
                         ) -> list[tuple[str, str]]:
    """(platform, source key) of ``tenant``'s sources with normalized parts, optionally of one platform or source."""
    found = sorted({tuple(rel.split("/")[-2:]) for rel in lake.glob(table_dir(RECORDS_TABLE, tenant, "*", "*"))})
    return [(p, s) for p, s in found if (platform is None or p == platform) and (source is None or s == source)
            and lake.part_ids(RECORDS_TABLE, tenant, p, s)]


def stored_rows(lake: Lake, tenant: str, platform: str | None = None, source: str | None = None) -> tuple[int, int]:
    """(rows, parts) the normalized tables hold for the same selection: every observation, not every key."""
    rows = parts = 0
    for p, s in sources_with_records(lake, tenant, platform, source):
        for _, table in lake.read_parts(RECORDS_TABLE, tenant, p, s, columns=["key"]):
            rows, parts = rows + table.num_rows, parts + 1
    return rows, parts


def latest_batches(lake: Lake, tenant: str, platform: str | None = None, source: str | None = None,
                   columns: list[str] | None = None, *, deleted: bool = True) -> Iterator[pa.RecordBatch]:
    """The latest observation of every key as record batches (bounded memory: only key columns are read whole);
    ``deleted=False`` leaves out keys whose latest observation is a tombstone."""
    from crawl_assets.pipeline.index.stage import pending_records  # it loads the ES client: not at import

    wanted = None if columns is None else list(dict.fromkeys([*columns, *([] if deleted else ["deleted"])]))
    for p, s in sources_with_records(lake, tenant, platform, source):
        pending = pending_records(lake, tenant, p, s, pending=lake.part_ids(RECORDS_TABLE, tenant, p, s))
        for batch in pending.batches(wanted):
            if not deleted:
                batch = batch.filter(pc.invert(pc.fill_null(batch.column("deleted"), False)))
            yield batch.select(columns) if columns is not None else batch


def latest_records(tenant: str, platform: str | None = None, source: str | None = None,
                   columns: list[str] | None = None, *, deleted: bool = True, lake_root: str | None = None
                   ) -> Iterator[dict[str, Any]]:
    """The latest observation of every key of ``tenant`` (optionally of one platform, or one source by key) as JSON-ready
    dicts (the documents ``crawl-assets normalize`` prints); the lake is ``lake_root``, else ``CRAWL_LAKE``'s."""
    lake = Lake(lake_root or settings.lake_root())
    for batch in latest_batches(lake, tenant, platform, source, columns, deleted=deleted):
        yield from arrow_to_records(batch)


def read_records(tenant: str, platform: str | None = None, source: str | None = None,
                 columns: list[str] | None = None, *, deleted: bool = True, lake_root: str | None = None) -> pa.Table:
    """``latest_records`` as one Arrow table (``.to_pandas()`` for a DataFrame): one row per key."""
    lake = Lake(lake_root or settings.lake_root())
    tables = [pa.Table.from_batches([b]) for b in latest_batches(lake, tenant, platform, source, columns, deleted=deleted)]
    return pa.concat_tables(tables, promote_options="default") if tables else pa.table({})
