"""What a source has not indexed yet, and the markers that say a part was: plain functions over the lake.

Only normalized parts not yet indexed are sent (a marker per part in the lake's ``index_state/``, written
after the sink accounted for every document), so a sync indexes what is new or changed.
"""

from collections import Counter
from collections.abc import Collection
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.lake import Lake
from crawl_assets.lake.layout import index_marker
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.normalize.edges import EDGE_COLUMNS, document_edges
from crawl_assets.pipeline.normalize import TABLE as RECORDS_TABLE
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


def pending_records(lake: Lake, tenant: str, platform: str, source: str, pending: Collection[str] | None = None
                    ) -> tuple[list[dict[str, Any]], list[str]]:
    """Records of parts not indexed yet (``pending``, else looked up; latest observation per key) and those
    parts' markers; indexed parts are not read."""
    latest: dict[str, dict[str, Any]] = {}
    markers = []
    wanted = set(pending_parts(lake, tenant, platform, source)[1] if pending is None else pending)
    for batch_id, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source, include=wanted.__contains__):
        markers.append(index_marker(tenant, platform, source, batch_id))
        for row in arrow_to_records(table):
            latest[row["key"]] = row
    return list(latest.values()), markers


def scan_keys(lake: Lake, tenant: str, platform: str, source: str, pending: set[str]) -> tuple[set[str], int]:
    """One pass over the key and deleted columns of every part: which ``pending`` keys were observed in
    more than one part (indexed or not: a crash may have stopped a run between indexing a part and
    marking it), and how many keys' latest observation is not a tombstone."""
    parts_of: Counter[str] = Counter()
    deleted: dict[str, bool] = {}
    for _, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source, columns=["key", "deleted"]):
        keys = table.column("key").to_pylist()
        parts_of.update(k for k in set(keys) if k in pending)
        for k, d in zip(keys, table.column("deleted").to_pylist()):
            deleted[k] = bool(d)
    return {k for k, n in parts_of.items() if n > 1}, sum(1 for d in deleted.values() if not d)


def live_key_count(lake: Lake, tenant: str, platform: str, source: str) -> int:
    """How many keys' latest observation is not a tombstone (``scan_keys``' count, columnar: no rows built)."""
    tables = [table for _, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source, columns=["key", "deleted"])]
    if not tables:
        return 0
    both = pa.concat_tables(tables)
    both = both.append_column("at", pa.array(range(both.num_rows), pa.int64()))
    latest = both.group_by("key", use_threads=False).aggregate([("at", "max")]).column("at_max")
    deleted = pc.fill_null(both.column("deleted").take(latest), False)
    return int(pc.sum(pc.invert(deleted)).as_py() or 0)


def edge_version_fields(record: dict[str, Any]) -> dict[str, Any]:
    """What an edge document carries of its record so that it gets the record's external version: an
    edge from an older observation then never overwrites (or revives) one from a newer observation."""
    collected = (record.get("provenance") or {}).get("collected_at")
    return {"edited_at": record.get("edited_at"), "deleted_at": record.get("deleted_at"),
            "provenance": {"collected_at": collected}}


def pending_edges(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The edge documents of the records about to be indexed (the same ``document_edges`` the
    ``relation_edges`` table is built from), versioned like their record: edges change only with their
    record, so the edges of records indexed before are not sent again."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for record in records:
        version = edge_version_fields(record)
        for edge in document_edges(record):
            rows[(edge[0], edge[1], edge[2])] = {**dict(zip(EDGE_COLUMNS, edge)), **version}
    return [rows[k] for k in sorted(rows)]
