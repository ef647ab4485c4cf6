"""The relate stage (``run_relate``): a source's reply, quote, repost, mention and hashtag edges, plus its hashtag
co-occurrence and author–hashtag participation tables, derived from its current records (Arrow → Parquet).

Edges are stored one file per normalized part (same batch id): the edges of the records whose latest
observation that part holds (read together, they are the source's edges). The two summary tables are one
``current`` part each, stamped with a watermark in their Parquet metadata: which normalized parts they come
from and the generation of edge files that goes with them. A sync with no new part reads and writes nothing
(``up_to_date``); records are streamed a record batch at a time, so memory does not grow with the source.

A sync that only appended parts writes those parts' edge files and adds their counts to the stored summary
tables (``refresh_relations``): no other file is read whole or rewritten. Only an append qualifies: the
watermark's parts are still the first ones, unchanged and of this normalizer version, and the edge files are
those of the watermark's generation. A key the new parts observe again counts only if its edge-relevant fields
are unchanged: its edges stay in the earlier part's file; a changed one (an edit, a now superseded version)
would need its old counts taken out, which first/last times cannot undo, so everything is rebuilt.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import NamedTuple

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.lake import Lake
from crawl_assets.normalize.edges import is_superseded
from crawl_assets.normalize.dedupe import key_hash
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE
from crawl_assets.pipeline.normalize.part import rows_with_keys
from crawl_assets.lake.tables import EDGES_SCHEMA
from crawl_assets.pipeline.relate.parts import Summaries, latest_masks, part_edge_batches
from crawl_assets.pipeline.stage import Check, MetadataPath, StageContext, StageReport
from crawl_assets.pipeline.version import NORMALIZER_VERSION

TABLE = "relation_edges"
SUMMARY_TABLES = ("hashtag_cooccurrence", "author_hashtag")
CURRENT = "current"  # the one part of each summary table
INPUTS_KEY = b"crawl_assets.inputs"  # Parquet metadata of the summary tables: the watermark (``Inputs`` as JSON)
GENERATION_KEY = b"crawl_assets.edges_generation"  # Parquet metadata of an edge file: the build it belongs to
MAX_EXAMPLES = 10
ORPHAN_READ_ROWS = 65_536  # edges read back at a time by the orphan check (each read looks up the part's keys)


class EdgeView(NamedTuple):
    """The fields of a record that edges and co-occurrence tables read (the same attributes as ``Record``)."""

    key: str
    created_at: datetime
    platform: str
    tenant: str
    author_id: str | None
    reply_to: str | None
    quote_of: str | None
    repost_of: str | None
    mentions: list[str]
    hashtags: list[str]


@dataclass(frozen=True)
class Inputs:
    """What the relation tables were derived from: the first ``parts`` normalized parts (their ids hash to
    ``digest``) of ``version``, the ``generation`` of edge files written with them, and what the tables then
    held (shown again when nothing changed), including the edges found not to start at a record of their part."""

    version: str
    parts: int
    digest: str
    records: int
    edges_by_type: dict[str, int] = field(default_factory=dict)
    summary_rows: dict[str, int] = field(default_factory=dict)
    generation: str = ""
    orphans: int = 0
    orphan_examples: list[str] = field(default_factory=list)

    def encode(self) -> bytes:
        return orjson.dumps(asdict(self), option=orjson.OPT_SORT_KEYS)


@dataclass
class Relations:
    """What one refresh of the relation tables did: ``mode`` is ``up_to_date`` (nothing new: nothing read
    or written), ``incremental`` (only the ``new_parts`` were read) or ``full`` (rebuilt from all parts)."""

    mode: str
    inputs: Inputs
    part: str  # the folder of the edge files
    new_parts: int


def parts_digest(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()


def edges_dir(lake: Lake, tenant: str, platform: str, source: str) -> str:
    return lake.table_part(TABLE, tenant, platform, source, CURRENT).rsplit("/", 1)[0]


def latest_views(lake: Lake, tenant: str, platform: str, source: str, ids: Collection[str]
                 ) -> list[tuple[str, np.ndarray]]:
    """Per part of ``ids``, which of its rows are their key's latest observation (key columns streamed as hashes)."""
    return latest_masks(lake, tenant, platform, source, ids)


def edge_views(lake: Lake, tenant: str, platform: str, source: str, parts: Collection[str],
               keys: pa.Array | None = None) -> dict[str, EdgeView | None]:
    """Per key (of ``keys`` when given), its latest observation among ``parts`` as the fields edges read,
    None when that is a superseded version of an edited X post. For the few records a sync adds."""
    latest: dict[str, EdgeView | None] = {}
    read = [*EdgeView._fields, "metadata"]
    wanted = set(parts)
    ids = [p for p in lake.part_ids(RECORDS_TABLE, tenant, platform, source) if p in wanted]
    tables = (rows_with_keys(lake, RECORDS_TABLE, tenant, platform, source, ids, keys, read)
              if keys is not None else (pa.Table.from_batches([rows]) for p in ids for rows in lake.iter_part_batches(
                  lake.table_part(RECORDS_TABLE, tenant, platform, source, p), columns=read)))
    for table in tables:  # a record batch at a time: a large part is never read whole
        columns = [table.column(name).to_pylist() for name in EdgeView._fields]
        for row, meta in zip(zip(*columns), table.column("metadata").to_pylist()):
            gone = bool(meta) and '"superseded_by"' in meta and is_superseded(orjson.loads(meta))
            latest[row[0]] = None if gone else EdgeView(*row)
    return latest


def write_relations(lake: Lake, tenant: str, platform: str, source: str) -> Inputs:
    """The source's edges and summary tables rebuilt from all its current records (also run by an erasure)."""
    ids = lake.part_ids(RECORDS_TABLE, tenant, platform, source)
    return rebuild(lake, tenant, platform, source, ids, all_current(lake, tenant, platform, source, ids))[1]


def rebuild(lake: Lake, tenant: str, platform: str, source: str, ids: list[str], complete: bool
            ) -> tuple[Inputs | None, Inputs]:
    """Every edge file and both summary tables from the parts ``ids``; ``complete``: all of them of this
    normalizer version. Returns (the watermark written, None when incomplete; what the tables hold)."""
    generation = uuid.uuid4().hex
    summaries, records, by_type = Summaries(), 0, Counter()
    orphans: list[str] = []
    for batch_id, mask in latest_views(lake, tenant, platform, source, ids):
        found, n = write_part_edges(lake, tenant, platform, source, batch_id, mask, summaries, generation)
        records += n
        by_type.update(found)
        orphans += part_orphans(lake, tenant, platform, source, batch_id)
    stale = [i for i in lake.part_ids(TABLE, tenant, platform, source) if i not in set(ids)]
    lake.remove(*(lake.table_part(TABLE, tenant, platform, source, i) for i in stale))
    frames = summaries.tables()
    held = Inputs(NORMALIZER_VERSION, len(ids), parts_digest(ids), records, dict(sorted(by_type.items())),
                  {name: frame.num_rows for name, frame in frames.items()}, generation, len(orphans),
                  sorted(orphans)[:MAX_EXAMPLES])
    # parts of an older normalizer version are about to be re-derived: no watermark, the next sync rebuilds
    write_summaries(lake, tenant, platform, source, frames, held if complete else None)
    return (held if complete else None), held


def edge_types(edges: pa.Table) -> dict[str, int]:
    return {row["values"]: row["counts"] for row in pc.value_counts(edges.column("type")).to_pylist()}


def write_part_edges(lake: Lake, tenant: str, platform: str, source: str, batch_id: str, mask: np.ndarray | None,
                     summaries: Summaries, generation: str) -> tuple[Counter[str], int]:
    """The part's edge file, written a record batch at a time (one row group each: the part's edges are never
    held whole, so memory does not grow with the part), and its counts added to ``summaries``. Returns
    (edges by type, records they come from)."""
    by_type: Counter[str] = Counter()
    records = 0

    def batches() -> Iterator[pa.Table]:
        nonlocal records
        for edges, n in part_edge_batches(lake, tenant, platform, source, batch_id, mask, summaries):
            records += n
            by_type.update(edge_types(edges))
            yield edges

    schema = EDGES_SCHEMA.with_metadata({GENERATION_KEY: generation.encode()})
    lake.write_part_chunks(lake.table_part(TABLE, tenant, platform, source, batch_id), batches(), schema,
                           version=NORMALIZER_VERSION)
    return by_type, records


def write_summaries(lake: Lake, tenant: str, platform: str, source: str,
                    summaries: dict[str, pa.Table], inputs: Inputs | None) -> None:
    """Write the summary tables (``Summaries.tables`` or merged counts), each stamped with the
    watermark; written after the edge files, so a crash before leaves the old watermark, which no longer
    matches the edge files: the next sync rebuilds."""
    stamp = {INPUTS_KEY: inputs.encode()} if inputs is not None else {}
    for name, table in summaries.items():
        lake.write_part(lake.table_part(name, tenant, platform, source, CURRENT),
                        table.replace_schema_metadata({**(table.schema.metadata or {}), **stamp}),
                        version=NORMALIZER_VERSION)


def part_orphans(lake: Lake, tenant: str, platform: str, source: str, batch_id: str) -> list[str]:
    """Sources of the part's stored edges that are no record of that part (read back: a check). The edge file
    is read a row group at a time against the part's keys' 64-bit hashes (8 bytes a key; neither the keys nor
    the edges of a large part are held whole)."""
    part = lake.table_part(RECORDS_TABLE, tenant, platform, source, batch_id)
    keys = np.sort(np.fromiter((key_hash(k) for batch in lake.iter_part_batches(part, columns=["key"])
                                for k in batch.column(0).to_pylist()), dtype=np.uint64))
    found: set[str] = set()
    for edges in lake.iter_part_batches(lake.table_part(TABLE, tenant, platform, source, batch_id), columns=["src"],
                                        batch_size=ORPHAN_READ_ROWS):
        src = edges.column("src").to_pylist()
        hashes = np.fromiter(map(key_hash, src), dtype=np.uint64, count=len(src))
        at = np.minimum(np.searchsorted(keys, hashes), max(len(keys) - 1, 0))
        absent = keys[at] != hashes if len(keys) else np.ones(len(src), dtype=bool)
        found.update(src[i] for i in np.flatnonzero(absent))  # no key has its hash: certainly no key
    return sorted(found)


def all_current(lake: Lake, tenant: str, platform: str, source: str, ids: list[str]) -> bool:
    """Whether every normalized part was written by the current normalizer (one footer read each)."""
    return all(lake.has_part(lake.table_part(RECORDS_TABLE, tenant, platform, source, i), version=NORMALIZER_VERSION)
               for i in ids)


def read_current(lake: Lake, table: str, tenant: str, platform: str, source: str,
                 columns: list[str] | None = None) -> pa.Table | None:
    """The ``current`` part of a summary table (only ``columns`` when given), or None."""
    for _, found in lake.read_parts(table, tenant, platform, source, columns=columns, include=CURRENT.__eq__):
        return found
    return None


def stored_inputs(lake: Lake, tenant: str, platform: str, source: str) -> Inputs | None:
    """The watermark the summary tables agree on (None when one lacks it or they differ)."""
    stamps = set()
    for name in SUMMARY_TABLES:
        table = read_current(lake, name, tenant, platform, source, columns=[])
        stamps.add(None if table is None else (table.schema.metadata or {}).get(INPUTS_KEY))
    stamp = stamps.pop() if len(stamps) == 1 else None
    return None if stamp is None else Inputs(**orjson.loads(stamp))


def edges_match(lake: Lake, tenant: str, platform: str, source: str, mark: Inputs, ids: list[str]) -> bool:
    """Whether the edge files are exactly those of the parts ``ids``, all of the watermark's generation."""
    if not mark.generation or lake.part_ids(TABLE, tenant, platform, source) != ids:
        return False
    return all(lake.part_metadata(lake.table_part(TABLE, tenant, platform, source, i)).get(GENERATION_KEY)
               == mark.generation.encode() for i in ids)

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
    new = edge_views(lake, tenant, platform, source, fresh)
    again = pa.array([], pa.string())
    if new:
        keys = pa.array(list(new), pa.string())
        before = edge_views(lake, tenant, platform, source, ids[:mark.parts], keys)
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
