"""The index stage: a source's pending parts and their edges sent, stale edges pruned, everything accounted for.

Only normalized parts not yet indexed are sent (a marker per part in the lake's ``index_state/``, written
after the sink accounted for every document), so a sync indexes what is new or changed. Writes are idempotent
and order-safe (``_id`` = key, external versions), so re-sending after a crash converges to the same index.
With every part accounted for, nothing is sent and only the live documents are counted (``mode: up_to_date``).

The load (``load``): the pending records and the edges the relation step wrote for them, sent together.

Records go a record batch at a time, their bulk lines built straight from Arrow (``index.documents``);
after each batch, the edge file's row group of the same batch (the relation step writes one per record batch
of ``BATCH_ROWS`` rows, read the same way here) goes to the edge sink with its records' versions: the two
families are in flight at once, and neither the records nor the edges are ever held whole. An edge whose
record is not in its batch's rows sent here (an edge file another layout wrote, or a key whose latest
observation is in a later part) is resolved at the end from the parts' version columns. Records seen in
earlier parts (``seen_before``) also get the edges that stayed in an earlier part's file (their edge fields did
not change), and their stale edges become tombstones.

A large load turns refresh off on the indices it writes and back on at the end (``BulkSink.relax_refresh``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from elasticsearch import Elasticsearch

# looked up here at call time (fault-injection sites patch this module's names)
from crawl_assets.index.indices import count_documents, restore_refresh, setup_indices, stale_edge_tombstones
from crawl_assets.index.documents import EDGE_FIELDS, edge_documents, record_documents, record_versions
from crawl_assets.index.sink import BulkSink, SendPool, SinkStats, close_together
from crawl_assets.lake import Lake
from crawl_assets.lake.layout import index_marker
from crawl_assets.lake.tables import TIME_COLUMNS
from crawl_assets.pipeline.index import MISSING_CLUSTER
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE
from crawl_assets.pipeline.normalize.stage import split_source_key
from crawl_assets.pipeline.relate.parts import BATCH_ROWS, last_positions, latest_rows
from crawl_assets.pipeline.relate.stage import refresh_relations
from crawl_assets.pipeline.relate.stage import TABLE as EDGES_TABLE
from crawl_assets.pipeline.stage import Check, StageContext, StageReport
from crawl_assets.pipeline.version import NORMALIZER_VERSION

ENCODE_ROWS = 2_500  # rows encoded at once (their Python values are what the producer holds; fewer pay the
# Arrow calls' fixed cost per slice more often)
RELAX_AT = 20_000  # records: a load at least this large turns the indices' refresh off while it runs
# Bodies of 8 MiB; both families share 4 requests in flight and 2 queued bodies, so the node's write threads
# always have the next body waiting, whichever family the producer is on
SINK_TUNING = {"batch_bytes": 8 * 1024 * 1024, "concurrency": 4, "queue_batches": 2}
VERSION_COLUMNS = ["key", *TIME_COLUMNS, "provenance"]


# What a source has not indexed yet, and the markers that say a part was

def marker_body(run_id: str) -> bytes:
    """A marker names the normalizer version of the part it accounts for: a part re-derived by a newer
    normalizer (same batch id, new content) is then pending again and gets re-indexed."""
    return f"{NORMALIZER_VERSION} {run_id}".encode()


def marked_current(lake: Lake, marker: str) -> bool:
    """Whether the marker exists and was written for the current normalizer version's part."""
    return lake.read_bytes(marker, len(NORMALIZER_VERSION) + 1) == f"{NORMALIZER_VERSION} ".encode()


def pending_parts(lake: Lake, tenant: str, platform: str, source: str) -> tuple[list[str], list[str]]:
    """(every normalized part, those the index has not accounted for): markers are read, no part is."""
    ids = lake.part_ids(RECORDS_TABLE, tenant, platform, source)
    return ids, [i for i in ids if not marked_current(lake, index_marker(tenant, platform, source, i))]


@dataclass
class Pending:
    """The parts not indexed yet (``stage.load`` streams them in record batches, never a whole part): per part,
    a mask of the rows that are their key's latest observation among the pending parts."""

    lake: Lake
    parts: list[tuple[str, pa.Array]]  # (part path, which of its rows are sent)
    keys: pa.Array  # the pending keys, each once
    markers: list[str]
    ids: list[str] = field(default_factory=list)  # the parts' batch ids, in the order of ``parts``

    def __len__(self) -> int:
        return len(self.keys)

    def batches(self, columns: list[str] | None = None, batch_size: int = 2_000) -> Iterator[pa.RecordBatch]:
        """The pending records (of ``columns`` when given), a record batch at a time."""
        for part, mask in self.parts:
            offset = 0
            for batch in self.lake.iter_part_batches(part, columns=columns, batch_size=batch_size):
                chosen = mask.slice(offset, batch.num_rows)
                offset += batch.num_rows
                yield batch.filter(chosen)


def pending_records(lake: Lake, tenant: str, platform: str, source: str, pending: Collection[str] | None = None
                    ) -> Pending:
    """Records of parts not indexed yet (``pending``, else looked up; latest observation per key) and those
    parts' markers; indexed parts are not read, and of the pending ones only the key column here."""
    wanted = pending_parts(lake, tenant, platform, source)[1] if pending is None else pending
    masks, keys = latest_rows(lake, tenant, platform, source, wanted)
    parts = [(lake.table_part(RECORDS_TABLE, tenant, platform, source, batch_id), pa.array(mask))
             for batch_id, mask in masks]
    return Pending(lake, parts, keys, [index_marker(tenant, platform, source, batch_id) for batch_id, _ in masks],
                   [batch_id for batch_id, _ in masks])


def scan_keys(lake: Lake, tenant: str, platform: str, source: str, pending: Collection[str] | pa.Array
              ) -> tuple[set[str], int]:
    """One pass over the key and deleted columns of every part: which ``pending`` keys were observed in
    more than one part (indexed or not: a crash may have stopped a run between indexing a part and
    marking it), and how many keys' latest observation is not a tombstone. Columnar: no rows built."""
    value_set = pending if isinstance(pending, pa.Array) else pa.array(sorted(pending), pa.string())
    tables, hits = [], []
    for _, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source, columns=["key", "deleted"]):
        tables.append(table)
        keys = table.column("key").combine_chunks()
        hits.append(pc.unique(keys.filter(pc.is_in(keys, value_set=value_set))))
    counts = pc.value_counts(pa.concat_arrays(hits)) if hits else pa.array([], pa.struct([]))
    before = {row["values"] for row in counts.to_pylist() if row["counts"] > 1}
    return before, live_in(tables)


def live_key_count(lake: Lake, tenant: str, platform: str, source: str) -> int:
    """How many keys' latest observation is not a tombstone (``scan_keys``' count, columnar: no rows built)."""
    return live_in([table for _, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source,
                                                          columns=["key", "deleted"])])


def live_in(tables: list[pa.Table]) -> int:
    """Of the key/deleted tables of every part (in collection order), the keys whose latest row is live."""
    if not tables:
        return 0
    both = pa.concat_tables(tables)
    _, latest = last_positions(both.column("key"))
    deleted = pc.fill_null(both.column("deleted").take(pa.array(latest)), False)
    return int(pc.sum(pc.invert(deleted)).as_py() or 0)


def run_index(platform: str, ctx: StageContext) -> StageReport | None:
    """Send the source's pending parts and their edges, prune stale edges, and account for it all. Without a
    cluster: nothing (the caller's output is optional), and the log says what to set."""
    source, cluster, the_lake = ctx.source, ctx.cluster, ctx.lake
    if cluster is None or not cluster.hosts:
        # info, not a warning: running without a cluster is a supported setup (the README's)
        ctx.log.info(f"{source}: {platform}/search_index not materialized: {MISSING_CLUSTER}")
        return None
    tenant, _ = split_source_key(source)
    parts, unmarked = pending_parts(the_lake, tenant, platform, source)
    if parts and not unmarked:
        return up_to_date(platform, ctx)
    relations = refresh_relations(the_lake, tenant, platform, source)  # the edge files the load reads
    if relations.mode != "up_to_date":
        ctx.log.info(f"{source}: relation tables brought up to date first ({relations.mode})")
    pending = pending_records(the_lake, tenant, platform, source, unmarked)
    seen_before, expected = scan_keys(the_lake, tenant, platform, source, pending.keys)
    with cluster.get_client() as client:
        setup_indices(client, [tenant])
        restore_refresh(client, tenant)  # a load that crashed may have left refresh off
        done = load(client, the_lake, tenant, platform, source, pending, seen_before, run_id=ctx.run_id)
        live = count_documents(client, tenant, source=source, family="records", include_tombstones=False)
    rec_stats, edge_stats, prune_stats = done.records, done.edges, done.pruned
    accounted = all(s.unaccounted == 0 for s in (rec_stats, edge_stats, prune_stats)) and \
        rec_stats.docs == len(pending) and prune_stats.docs == done.stale
    if accounted:
        for marker in pending.markers:
            the_lake.write_bytes(marker, marker_body(ctx.run_id))
    return StageReport(
        metadata={
            "mode": "indexed",
            **{f"records_{k}": v for k, v in rec_stats.as_metadata().items()},
            **{f"edges_{k}": v for k, v in edge_stats.as_metadata().items()},
            "parts_indexed": len(pending.markers),
            "stale_edges_removed": prune_stats.created + prune_stats.updated,
            "index_live_documents": live,
        },
        checks=index_checks(accounted, rec_stats.failed + edge_stats.failed, live, expected),
    )


def up_to_date(platform: str, ctx: StageContext) -> StageReport:
    """Every normalized part is accounted for: nothing is sent; the live count is still checked."""
    source = ctx.source
    tenant, _ = split_source_key(source)
    expected = live_key_count(ctx.lake, tenant, platform, source)
    with ctx.cluster.get_client() as client:
        live = count_documents(client, tenant, source=source, family="records", include_tombstones=False)
    return StageReport(
        metadata={"mode": "up_to_date", "parts_indexed": 0, "documents_sent": 0, "index_live_documents": live},
        checks=index_checks(True, 0, live, expected),
    )


def index_checks(accounted: bool, dead_lettered: int, live: int, expected: int) -> list[Check]:
    return [
        Check("no_unaccounted_failures", accounted, {"dead_lettered": dead_lettered}),
        Check("index_count_matches", live == expected, {"index": live, "normalized_live": expected}),
    ]


@dataclass
class Loaded:
    """What one load sent: per family the sink's figures, the tombstones of stale edges, and how many edges
    needed the slow path (their record was not in their batch)."""

    records: SinkStats
    edges: SinkStats
    pruned: SinkStats
    stale: int
    resolved_late: int = 0
    reobserved: dict[str, int] = field(default_factory=dict)


class _Load:
    def __init__(self, lake: Lake, tenant: str, platform: str, source: str, seen_before: Collection[str],
                 records: BulkSink, edges: BulkSink) -> None:
        self.lake, self.tenant, self.platform, self.source = lake, tenant, platform, source
        self.seen_before = seen_before
        self.records, self.edges = records, edges
        self.reobserved: dict[str, int] = {}  # key seen in another part -> the version sent now
        self.keep: dict[str, set[str]] = {}  # such a key -> its current edges' ids
        self.late: list[tuple[str, int, np.ndarray]] = []  # (edge part, row group, rows) resolved at the end

    def part(self, batch_id: str, path: str, mask: pa.Array) -> None:
        """Send a part's chosen records, each batch followed by its edges."""
        edge_path = self.lake.table_part(EDGES_TABLE, self.tenant, self.platform, self.source, batch_id)
        groups = self.lake.iter_part_row_groups(edge_path, columns=list(EDGE_FIELDS))
        offset = group_no = 0
        for batch in self.lake.iter_part_batches(path, batch_size=BATCH_ROWS, use_threads=False):
            rows = batch.filter(mask.slice(offset, batch.num_rows))
            offset += batch.num_rows
            versions: dict[str, int] = {}
            for start in range(0, rows.num_rows, ENCODE_ROWS):  # a slice's Python values at a time
                encoded = record_documents(rows.slice(start, ENCODE_ROWS), self.tenant)
                self.records.add_encoded(encoded)
                versions.update(zip(encoded.ids, encoded.versions))
            if self.seen_before:
                self.reobserved.update((k, v) for k, v in versions.items() if k in self.seen_before)
            group = next(groups, None)
            if group is not None:
                self.send_edges(group, versions, edge_path, group_no)
                group_no += 1
        for group in groups:  # more row groups than record batches: another layout; resolved at the end
            self.late.append((edge_path, group_no, np.arange(group.num_rows)))
            group_no += 1

    def send_edges(self, group: pa.Table, versions: dict[str, int], edge_path: str, group_no: int) -> None:
        srcs = group.column("src").to_pylist()
        found = [versions.get(s) for s in srcs]
        missing = [i for i, v in enumerate(found) if v is None]
        if missing:
            self.late.append((edge_path, group_no, np.array(missing)))
            keep = np.ones(len(srcs), dtype=bool)
            keep[missing] = False
            group, srcs = group.filter(pa.array(keep)), [s for s, k in zip(srcs, keep) if k]
            found = [v for v in found if v is not None]
        self.send(group, srcs, found)

    def send(self, group: pa.Table, srcs: list[str], versions: list[int]) -> None:
        encoded = edge_documents(group, versions)
        self.edges.add_encoded(encoded)
        if self.seen_before:
            for src, edge in zip(srcs, encoded.ids):
                if src in self.seen_before:
                    self.keep.setdefault(src, set()).add(edge)

    def resolve_late(self) -> int:
        """Send the edges whose record was not in their batch, with the version of their key's latest
        observation in any part. Returns how many were sent."""
        if not self.late:
            return 0
        wanted = pa.array(sorted({s for path, group_no, rows in self.late
                                  for s in self._group(path, group_no).column("src").take(pa.array(rows)).to_pylist()}),
                          pa.string())
        versions = latest_versions(self.lake, self.tenant, self.platform, self.source, wanted)
        sent = 0
        for path, group_no, rows in self.late:
            group = self._group(path, group_no).take(pa.array(rows))
            srcs = group.column("src").to_pylist()
            known = [versions.get(s) is not None for s in srcs]
            group = group.filter(pa.array(known))
            srcs = [s for s, k in zip(srcs, known) if k]
            self.send(group, srcs, [versions[s] for s in srcs])
            sent += len(srcs)
        return sent

    def _group(self, path: str, group_no: int) -> pa.Table:
        for i, group in enumerate(self.lake.iter_part_row_groups(path, columns=list(EDGE_FIELDS))):
            if i == group_no:
                return group
        raise LookupError(f"{path} has no row group {group_no}")

    def unchanged_edges(self, pending_ids: Collection[str]) -> None:
        """Edges of records seen before whose edges stayed in an earlier part's file (their edge fields did
        not change): sent again with the version sent now, and kept."""
        left = pa.array(sorted(k for k in self.reobserved if k not in self.keep), pa.string())
        if not len(left):
            return
        pending = set(pending_ids)
        for _, table in self.lake.read_parts(EDGES_TABLE, self.tenant, self.platform, self.source,
                                             columns=list(EDGE_FIELDS), include=lambda i: i not in pending):
            hits = table.filter(pc.is_in(table.column("src"), value_set=left))
            if hits.num_rows:
                srcs = hits.column("src").to_pylist()
                self.send(hits, srcs, [self.reobserved[s] for s in srcs])


def latest_versions(lake: Lake, tenant: str, platform: str, source: str, keys: pa.Array) -> dict[str, int]:
    """The version of each key's latest observation among all the source's parts (only rows of ``keys`` read
    into Python)."""
    out: dict[str, int] = {}
    for _, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source, columns=VERSION_COLUMNS):
        rows = table.filter(pc.is_in(table.column("key"), value_set=keys))
        if rows.num_rows:
            versions, usable = record_versions(rows)
            out.update((k, int(v)) for k, v, ok in zip(rows.column("key").to_pylist(), versions, usable) if ok)
    return out


def load(client: Elasticsearch, lake: Lake, tenant: str, platform: str, source: str, pending: Pending,
         seen_before: Collection[str], *, run_id: str | None, **tuning: Any) -> Loaded:
    """Send ``pending`` (records and their edges), then prune the stale edges of records seen before."""
    tuned = {**SINK_TUNING, **tuning}
    pool = SendPool(tuned.pop("concurrency"), tuned.pop("queue_batches"))  # one pipe for both families
    sinks = {"tenant": tenant, "deadletter_root": lake.root, "run_id": run_id, "pool": pool,
             "relax_refresh": len(pending) >= RELAX_AT, **tuned}
    records = BulkSink(client, family="records", **sinks)
    edges = None
    try:
        edges = BulkSink(client, family="edges", **sinks)
        work = _Load(lake, tenant, platform, source, set(seen_before), records, edges)
        for batch_id, (path, mask) in zip(pending.ids, pending.parts):
            work.part(batch_id, path, mask)
        late = work.resolve_late()
        work.unchanged_edges(pending.ids)
    finally:  # both families' last bodies in flight at once, then one refresh
        close_together([records] if edges is None else [records, edges])
    stale = stale_edge_tombstones(client, tenant, work.reobserved, work.keep)
    pruned = SinkStats()
    if stale:
        with BulkSink(client, family="edges", tenant=tenant, deadletter_root=lake.root, run_id=run_id) as prune:
            for doc, version in stale:
                prune.add(doc, version)
        pruned = prune.stats
    return Loaded(records.stats, edges.stats, pruned, len(stale), late, work.reobserved)
