"""What a source has not indexed yet, and the markers that say a part was: plain functions over the lake.

Only normalized parts not yet indexed are sent (a marker per part in the lake's ``index_state/``, written
after the sink accounted for every document), so a sync indexes what is new or changed.
"""

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.lake import Lake
from crawl_assets.lake.layout import index_marker
from crawl_assets.pipeline.normalize.batch import TABLE as RECORDS_TABLE
from crawl_assets.pipeline.relate.parts import last_positions, latest_rows
from crawl_assets.pipeline.version import NORMALIZER_VERSION

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
