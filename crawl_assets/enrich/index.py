"""Features into the tenant's own index (``crawl-features-{tenant}.all``), through the same bulk sink as
records: idempotent, order-safe, every document accounted for, refusals dead-lettered.

* Record-level features (one document per record, ``_id`` = ``{enricher}:{record key}``) are versioned like
  their record, so the features of an older observation never overwrite a newer one's. A feature part is
  sent once per stamp and normalized version (a marker beside it, ``_indexed/{batch}.done``, written after
  the sink accounted for every document); a record re-observed without a finding loses its document.
* Tenant-wide features (clusters, trend windows, accounts) are compared with what was indexed last time
  (``_tenant/_indexed.parquet``: id and content hash of each document): only new or changed documents are
  sent, and documents no longer produced are deleted.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import orjson
import pyarrow as pa
from elasticsearch import Elasticsearch

from crawl_assets.enrich import store
from crawl_assets.enrich.base import CombineContext, Enricher
from crawl_assets.index.indices import setup_indices
from crawl_assets.index.naming import index_name
from crawl_assets.index.scan import bulk_write, delete_line
from crawl_assets.index.sink import SinkStats, index_documents
from crawl_assets.lake import Lake

FAMILY = "features"
_CHUNK = 1000


@dataclass
class IndexResult:
    stats: SinkStats = field(default_factory=SinkStats)
    deleted: int = 0
    parts_indexed: int = 0
    unchanged: int = 0  # tenant-wide documents already indexed as they are

    @property
    def accounted(self) -> bool:
        return self.stats.unaccounted == 0 and self.stats.failed == 0


def _marker_body(stamp: str, records_version: str) -> bytes:
    return f"{stamp} {records_version}".encode()


def _read_marker(lake: Lake, relative: str) -> bytes | None:
    return lake.read_bytes(relative, 4096)


def delete_ids(client: Elasticsearch, tenant: str, ids: list[str]) -> int:
    """Hard-delete feature documents by ``_id`` (absent ones count as nothing); returns how many went."""
    index = index_name(FAMILY, tenant, None)
    deleted = 0
    for start in range(0, len(ids), _CHUNK):
        counts = bulk_write(client, [delete_line(index, i) for i in ids[start:start + _CHUNK]])
        deleted += counts.get("deleted", 0)
    if ids and client.indices.exists(index=index):
        client.indices.refresh(index=index)
    return deleted


def index_features(client: Elasticsearch, lake: Lake, enricher: Enricher, tenant: str, platform: str, source: str,
                   *, run_id: str | None = None, removed_keys: set[str] = frozenset()) -> IndexResult:
    """Send the source's (and, for a tenant-wide enricher, the tenant's) features not indexed yet; delete
    the documents of ``removed_keys`` (records of parts that are gone: retention, erasure) that no
    remaining part of the source holds."""
    setup_indices(client, [tenant])
    if enricher.scope == "record":
        result = _index_parts(client, lake, enricher, tenant, platform, source, run_id)
        if removed_keys:
            remaining = {k for _, t in lake.read_parts(store.RECORDS_TABLE, tenant, platform, source, columns=["key"])
                         for k in t.column("key").to_pylist()}
            result.deleted += delete_ids(client, tenant, [f"{enricher.name}:{k}" for k in sorted(removed_keys - remaining)])
        return result
    return index_tenant(client, lake, enricher, tenant, run_id=run_id)


def _index_parts(client: Elasticsearch, lake: Lake, enricher: Enricher, tenant: str, platform: str, source: str,
                 run_id: str | None) -> IndexResult:
    result = IndexResult()
    states = [s for s in store.part_states(lake, enricher.name, enricher.stamp, tenant, platform, source) if s.current]
    pending = [s for s in states if _read_marker(lake, store.marker_path(enricher.name, tenant, platform, source, s.batch_id))
               != _marker_body(enricher.stamp, s.records_version)]
    if not pending:
        return result
    keys_by_part = {batch: table.column("key").to_pylist() for batch, table in lake.read_parts(
        store.RECORDS_TABLE, tenant, platform, source, columns=["key"])}
    parts_of = Counter(k for keys in keys_by_part.values() for k in set(keys))
    for state in pending:
        rows = store.read_table(lake, store.part_path(enricher.name, tenant, platform, source, state.batch_id))
        if rows is None:
            continue
        stats = index_documents(client, enricher.documents("part", rows, None), family=FAMILY, tenant=tenant,
                                deadletter_root=lake.root, run_id=run_id)
        result.stats = result.stats.merge(stats)
        # a record of this part without a finding loses the document an earlier observation (or an earlier
        # stamp) of it left; keys seen only here and never indexed before have none to lose
        found = set(rows.column("key").to_pylist())
        indexed_before = _read_marker(lake, store.marker_path(enricher.name, tenant, platform, source, state.batch_id))
        stale = [f"{enricher.name}:{k}" for k in keys_by_part.get(state.batch_id, [])
                 if k not in found and (indexed_before is not None or parts_of[k] > 1)]
        result.deleted += delete_ids(client, tenant, stale)
        if stats.unaccounted == 0 and stats.failed == 0:
            lake.write_bytes(store.marker_path(enricher.name, tenant, platform, source, state.batch_id),
                             _marker_body(enricher.stamp, state.records_version))
            result.parts_indexed += 1
    return result


def _state_path(name: str, tenant: str) -> str:
    return f"{store.AREA}/{name}/{tenant}/{store.TENANT_DIR}/_indexed.parquet"


def _doc_hash(doc: dict[str, Any]) -> str:
    stable = {k: v for k, v in doc.items() if k != "updated_at"}
    return hashlib.blake2b(orjson.dumps(stable, option=orjson.OPT_SORT_KEYS), digest_size=12).hexdigest()


def _generated_at(table: pa.Table) -> datetime:
    if "generated_at" in table.column_names and table.num_rows:
        return table.column("generated_at")[0].as_py()
    return datetime.now(timezone.utc)


def index_tenant(client: Elasticsearch, lake: Lake, enricher: Enricher, tenant: str, *,
                 run_id: str | None = None) -> IndexResult:
    """Bring the index to the tenant's current tables: changed documents sent, vanished ones deleted."""
    result = IndexResult()
    previous = store.read_table(lake, _state_path(enricher.name, tenant))
    before = dict(zip(previous.column("id").to_pylist(), previous.column("hash").to_pylist())) if previous else {}
    now: dict[str, str] = {}
    changed: list[dict[str, Any]] = []
    for table_name in enricher.tables:  # type: ignore[attr-defined]
        rows = store.read_table(lake, store.tenant_path(enricher.name, tenant, table_name))
        if rows is None:
            continue
        context = CombineContext(tenant=tenant, generated_at=_generated_at(rows))
        for doc in enricher.documents(table_name, rows, context):
            digest = now[doc["key"]] = _doc_hash(doc)
            if before.get(doc["key"]) != digest:
                changed.append(doc)
    result.unchanged = len(now) - len(changed)
    result.stats = index_documents(client, changed, family=FAMILY, tenant=tenant, deadletter_root=lake.root,
                                   run_id=run_id)
    result.deleted = delete_ids(client, tenant, sorted(set(before) - set(now)))
    if result.accounted:
        state = pa.table({"id": list(now), "hash": list(now.values())})
        lake.write_part(_state_path(enricher.name, tenant), state, version=enricher.stamp)
    return result
