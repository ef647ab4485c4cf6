"""The relate stage (``run_relate``): the relation tables kept up to date by what is new. A sync that
appended normalized parts writes those parts' edge files and adds their co-occurrence counts to the stored
summary tables; no other file is read whole or rewritten, so its cost follows what is new.

Only an append qualifies: the stored watermark's parts are still the first ones, unchanged and of this
normalizer version, and the edge files are those of the watermark's generation. A key the new parts observe
again counts only if its edge-relevant fields are unchanged (a refreshed metric, say): its edges stay in the
earlier part's file; a changed one (an edit, a now superseded version) would need its old counts taken out,
which first/last times cannot undo, so everything is rebuilt. The tables then hold what a rebuild gives.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.lake import Lake
from crawl_assets.normalize.edges import Summaries
from crawl_assets.pipeline.relate import tables  # edge_views looked up at call time (a fault-injection site)
from crawl_assets.pipeline.normalize.batch import TABLE as RECORDS_TABLE
from crawl_assets.pipeline.relate.parts import latest_masks
from crawl_assets.pipeline.relate.tables import (
    MAX_EXAMPLES,
    SUMMARY_TABLES,
    Inputs,
    Relations,
    all_current,
    edges_dir,
    edges_match,
    parts_digest,
    part_orphans,
    read_current,
    rebuild,
    stored_inputs,
    write_part_edges,
    write_summaries,
)
from crawl_assets.pipeline.stage import Check, MetadataPath, StageContext, StageReport
from crawl_assets.pipeline.version import NORMALIZER_VERSION


def refresh_relations(lake: Lake, tenant: str, platform: str, source: str) -> Relations:
    """Bring the source's relation tables up to date with its normalized parts, doing as little as it can."""
    ids = lake.part_ids(RECORDS_TABLE, tenant, platform, source)
    complete = all_current(lake, tenant, platform, source, ids)
    mark = stored_inputs(lake, tenant, platform, source) if complete else None
    folder = edges_dir(lake, tenant, platform, source)
    if (mark is not None and mark.version == NORMALIZER_VERSION and mark.parts <= len(ids)
            and mark.digest == parts_digest(ids[:mark.parts])
            and edges_match(lake, tenant, platform, source, mark, ids[:mark.parts])):
        if mark.parts == len(ids):
            return Relations("up_to_date", mark, folder, 0)
        added = add_parts(lake, tenant, platform, source, mark, ids)
        if added is not None:
            return Relations("incremental", added, folder, len(ids) - mark.parts)
    _, held = rebuild(lake, tenant, platform, source, ids, complete)
    return Relations("full", held, folder, len(ids) - (mark.parts if mark else 0))


def add_parts(lake: Lake, tenant: str, platform: str, source: str, mark: Inputs, ids: list[str]) -> Inputs | None:
    """Write the edge files of the parts after the watermark and add their counts to the stored summary
    tables; None (nothing written) when a key they observe again changed in a way that needs a rebuild."""
    fresh = ids[mark.parts:]
    new = tables.edge_views(lake, tenant, platform, source, fresh)
    again = pa.array([], pa.string())
    if new:
        keys = pa.array(list(new), pa.string())
        before = tables.edge_views(lake, tenant, platform, source, ids[:mark.parts], keys)
        for key, view in before.items():
            if view != new[key]:
                return None
        again = pa.array(list(before), pa.string())  # observed again, unchanged: their edges stay where they are
    stored = {name: read_current(lake, name, tenant, platform, source) for name in SUMMARY_TABLES}
    if any(table is None for table in stored.values()):
        return None
    summaries, records, by_type, orphans = Summaries(), 0, Counter(mark.edges_by_type), []
    masks = latest_masks(lake, tenant, platform, source, fresh)
    for batch_id, mask in masks:
        [(_, keys)] = lake.read_parts(RECORDS_TABLE, tenant, platform, source, columns=["key"],
                                      include=batch_id.__eq__)
        known = pc.is_in(keys.column("key"), value_set=again).to_numpy(zero_copy_only=False)
        found, n = write_part_edges(lake, tenant, platform, source, batch_id, mask & ~np.asarray(known, bool),
                                    summaries, mark.generation)
        records += n
        by_type.update(found)
        orphans += part_orphans(lake, tenant, platform, source, batch_id)
    delta = summaries.tables()
    merged = {name: merged_counts(stored[name], delta[name]) if stored[name].num_rows else delta[name]
              for name in SUMMARY_TABLES}
    inputs = Inputs(NORMALIZER_VERSION, len(ids), parts_digest(ids), mark.records + records,
                    dict(sorted(by_type.items())), {name: table.num_rows for name, table in merged.items()},
                    mark.generation, mark.orphans + len(orphans), sorted([*mark.orphan_examples, *orphans])[:MAX_EXAMPLES])
    write_summaries(lake, tenant, platform, source, merged, inputs)
    return inputs


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
    return merged.cast(stored.schema.remove_metadata())


def run_relate(platform: str, ctx: StageContext) -> StageReport:
    """The relate stage: the source's edges and co-occurrence tables, brought up to date with its parts."""
    tenant = ctx.source.split(".", 1)[0]
    done = refresh_relations(ctx.lake, tenant, platform, ctx.source)
    # each edge file is checked against its part's keys when written; unchanged files keep their result
    by_type = done.inputs.edges_by_type
    return StageReport(
        metadata={
            "mode": done.mode,
            "new_parts": done.new_parts,
            "edges": sum(by_type.values()),
            **{f"edges_{t}": int(n) for t, n in sorted(by_type.items())},
            **{f"{name}_rows": n for name, n in done.inputs.summary_rows.items()},
            "records": done.inputs.records,
            "path": MetadataPath(ctx.lake.url(done.part)),
        },
        checks=[Check("edge_sources_exist", not done.inputs.orphans,
                      {"orphan_sources": done.inputs.orphans, "examples": done.inputs.orphan_examples})],
    )
