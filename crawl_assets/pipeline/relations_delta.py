"""The relation tables kept up to date by what is new: a sync that appended normalized parts adds their
records' edges and co-occurrence counts to the stored tables instead of rebuilding them from every part.

Only an append qualifies: the stored watermark's parts are still the first ones, unchanged and of this
normalizer version. A key the new parts observe again counts only if its edge-relevant fields are unchanged
(a refreshed metric, say); a changed one (an edit, a now superseded version) would need its old counts
taken out, which first/last times cannot undo, so the tables are rebuilt. Results equal a rebuild's bytes.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.lake import Lake
from crawl_assets.lake.tables import EDGES_SCHEMA
from crawl_assets.normalize.edges import edges_frame
from crawl_assets.pipeline import relations  # latest_views looked up at call time (a fault-injection site)
from crawl_assets.pipeline.normalize import TABLE as RECORDS_TABLE
from crawl_assets.pipeline.relations import (
    SUMMARY_BUILDERS,
    TABLE,
    Inputs,
    Relations,
    all_current,
    parts_digest,
    rebuild,
    read_current,
    sorted_edges,
    stored_inputs,
    to_arrow,
    write_tables,
)
from crawl_assets.pipeline.version import NORMALIZER_VERSION

EDGE_ORDER = [("type", "ascending"), ("src", "ascending"), ("dst", "ascending")]


def refresh_relations(lake: Lake, tenant: str, platform: str, source: str) -> Relations:
    """Bring the source's relation tables up to date with its normalized parts, doing as little as it can."""
    ids = lake.part_ids(RECORDS_TABLE, tenant, platform, source)
    complete = all_current(lake, tenant, platform, source, ids)
    mark = stored_inputs(lake, tenant, platform, source) if complete else None
    part = lake.table_part(TABLE, tenant, platform, source, "current")
    if (mark is not None and mark.version == NORMALIZER_VERSION and mark.parts <= len(ids)
            and mark.digest == parts_digest(ids[:mark.parts])):
        if mark.parts == len(ids):
            return Relations("up_to_date", mark, part, 0)
        added = add_parts(lake, tenant, platform, source, mark, ids)
        if added is not None:
            return Relations("incremental", added, part, len(ids) - mark.parts)
    records, edges, summary_rows, part, inputs = rebuild(lake, tenant, platform, source, ids, complete)
    if inputs is None:  # not stamped (parts of an older normalizer remain): what the tables hold all the same
        by_type = {str(t): int(n) for t, n in sorted(edges["type"].value_counts().items())}
        inputs = Inputs(NORMALIZER_VERSION, len(ids), parts_digest(ids), len(records), by_type, summary_rows)
    return Relations("full", inputs, part, len(ids) - (mark.parts if mark else 0))


def add_parts(lake: Lake, tenant: str, platform: str, source: str, mark: Inputs, ids: list[str]) -> Inputs | None:
    """Add the records of the parts after the watermark to the stored tables and write them; None (nothing
    written) when a key they observe again changed in a way that needs a rebuild."""
    new = relations.latest_views(lake, tenant, platform, source, ids[mark.parts:])
    if new:
        keys = pa.array(list(new), pa.string())
        holding = {part_id for part_id, table in lake.read_parts(
            RECORDS_TABLE, tenant, platform, source, columns=["key"], include=set(ids[:mark.parts]).__contains__)
            if pc.any(pc.is_in(table.column("key"), value_set=keys)).as_py()}
        for key, before in relations.latest_views(lake, tenant, platform, source, holding, keys).items():
            if before != new[key]:
                return None
            del new[key]  # observed again, unchanged: nothing to add
    added = [view for view in new.values() if view is not None]
    stored = read_current(lake, TABLE, tenant, platform, source)
    if stored is None:
        return None
    fresh = to_arrow(sorted_edges(edges_frame(added)), EDGES_SCHEMA)
    edges = pa.concat_tables([stored.cast(EDGES_SCHEMA), fresh]).combine_chunks()
    edges = edges.take(pc.sort_indices(edges, sort_keys=EDGE_ORDER))
    summaries: dict[str, pd.DataFrame | pa.Table] = {}
    for name, build in SUMMARY_BUILDERS:
        table = read_current(lake, name, tenant, platform, source)
        if table is None:
            return None
        summaries[name] = merged_counts(table, pa.Table.from_pandas(build(added), preserve_index=False)) \
            if table.num_rows else build(added)
    inputs = Inputs(NORMALIZER_VERSION, len(ids), parts_digest(ids), mark.records + len(added))
    written, _ = write_tables(lake, tenant, platform, source, edges, summaries, inputs)
    return written


def merged_counts(stored: pa.Table, delta: pa.Table) -> pa.Table:
    """A stored summary table with the counts of new records added, columnar: counts summed, first/last
    times widened, rows in key order; the stored table's schema (a rebuild writes the same)."""
    keys = stored.column_names[:4]
    both = pa.concat_tables([stored.replace_schema_metadata(None), delta.select(stored.column_names).cast(
        stored.schema.remove_metadata())])
    merged = both.group_by(keys, use_threads=False).aggregate(
        [("count", "sum"), ("first_at", "min"), ("last_at", "max")])
    merged = merged.rename_columns([{"count_sum": "count", "first_at_min": "first_at", "last_at_max": "last_at"}
                                    .get(c, c) for c in merged.column_names]).select(stored.column_names)
    merged = merged.take(pc.sort_indices(merged, sort_keys=[(k, "ascending") for k in keys]))
    pandas_meta = {k: v for k, v in (stored.schema.metadata or {}).items() if k == b"pandas"}  # as a frame gives
    return merged.cast(stored.schema.remove_metadata()).replace_schema_metadata(pandas_meta)


def orphan_sources(lake: Lake, tenant: str, platform: str, source: str) -> list[str]:
    """Edge sources that are no record of the source (a check; only key columns are read, never rows)."""
    edges = read_current(lake, TABLE, tenant, platform, source, columns=["src"])
    if edges is None or edges.num_rows == 0:
        return []
    missing = edges.column("src")
    for _, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source, columns=["key"]):
        missing = missing.filter(pc.invert(pc.is_in(missing, value_set=table.column("key"))))
    return sorted(set(missing.to_pylist()))
