"""``search_index``: the source's records and edges in Elasticsearch, written idempotently.

Only normalized parts not yet indexed are sent (a marker per part in the lake's ``index_state/``,
written after the sink accounted for every document), so a sync indexes what is new or changed.
Writes are idempotent and order-safe (``_id`` = key, external versions), so re-sending after a
crash converges to the same index.
"""


from collections import Counter
from collections.abc import Iterator
from typing import Any

import dagster as dg

from crawl_assets.assets.deriver_version import NORMALIZER_VERSION
from crawl_assets.assets.normalized_records import TABLE as RECORDS_TABLE
from crawl_assets.assets.normalized_records import split_source_key
from crawl_assets.index.bootstrap import setup_indices
from crawl_assets.index.sink import edge_id, index_documents
from crawl_assets.index.stale_edges import stale_edge_tombstones
from crawl_assets.index.stats import count_documents
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.normalize.edges import EDGE_COLUMNS, document_edges
from crawl_assets.partitions import SOURCE_PARTITIONS
from crawl_assets.resources.elasticsearch import ElasticsearchResource
from crawl_assets.resources.lake import LakeResource

MISSING_CLUSTER = (
    "no Elasticsearch cluster is configured: set CRAWL_ES_URL (e.g. http://localhost:9200; "
    "`docker compose up elasticsearch` starts one) and reload the code location"
)


def _marker(source_dir: str, batch_id: str) -> str:
    return f"index_state/{source_dir}/{batch_id}.done"


def marker_body(run_id: str) -> bytes:
    """A marker names the normalizer version of the part it accounts for: a part re-derived by a newer
    normalizer (same batch id, new content) is then pending again and gets re-indexed."""
    return f"{NORMALIZER_VERSION} {run_id}".encode()


def marked_current(lake: Lake, marker: str) -> bool:
    """Whether the marker exists and was written for the current normalizer version's part."""
    try:
        with lake.fs.open(lake.path(marker), "rb") as fh:
            return fh.read(len(NORMALIZER_VERSION) + 1) == f"{NORMALIZER_VERSION} ".encode()
    except FileNotFoundError:
        return False


def pending_records(lake: Lake, tenant: str, platform: str, source: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Records of parts not indexed yet (latest observation per key) and those parts' markers; indexed
    parts are not read."""
    latest: dict[str, dict[str, Any]] = {}
    markers = []
    source_dir = f"{tenant}/{platform}/{source}"
    indexed = {batch_id for batch_id in lake.part_ids(RECORDS_TABLE, tenant, platform, source)
               if marked_current(lake, _marker(source_dir, batch_id))}
    for batch_id, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source,
                                           include=lambda b: b not in indexed):
        markers.append(_marker(source_dir, batch_id))
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


def index_checks(key: dg.AssetKey) -> list[dg.AssetCheckSpec]:
    return [
        dg.AssetCheckSpec("no_unaccounted_failures", asset=key, blocking=True,
                          description="Every document sent was indexed, a no-op, or dead-lettered."),
        dg.AssetCheckSpec("index_count_matches", asset=key,
                          description="Live documents of the source in the index = its non-deleted records."),
    ]


def build_search_index(platform: str, normalized: dg.AssetsDefinition, edges: dg.AssetsDefinition, *,
                       cluster_configured: bool = True) -> dg.AssetsDefinition:
    """The index asset. Its output is optional: without a cluster the step logs why and what to set,
    succeeds, and the asset stays unmaterialized (no failed run, no red partition). Its checks are
    declared only when a cluster is configured, so an index that cannot run shows no checks rather
    than checks that read as passed."""
    key = dg.AssetKey([platform, "search_index"])
    description = f"{platform} records and edges of one source in Elasticsearch (per-tenant monthly indices)."
    if not cluster_configured:
        description += f"\n\nNot materialized: {MISSING_CLUSTER}."

    @dg.multi_asset(
        name=f"{platform}__search_index",
        specs=[dg.AssetSpec(key, deps=[normalized.key, edges.key], partitions_def=SOURCE_PARTITIONS[platform],
                            group_name=platform, kinds={"elasticsearch"}, description=description,
                            skippable=True)],
        check_specs=index_checks(key) if cluster_configured else [],
        can_subset=True,
    )
    def _index(context: dg.AssetExecutionContext, lake: LakeResource,
               elasticsearch: ElasticsearchResource) -> Iterator[dg.MaterializeResult]:
        if not elasticsearch.hosts:
            # info, not a warning: running without a cluster is a supported setup (the README's)
            context.log.info(f"{context.partition_key}: {key.to_user_string()} not materialized: {MISSING_CLUSTER}")
            return
        yield index_source(context, lake.lake(), elasticsearch, platform, key)

    return _index


def index_source(context: dg.AssetExecutionContext, the_lake: Lake, elasticsearch: ElasticsearchResource,
                 platform: str, key: dg.AssetKey) -> dg.MaterializeResult:
    """Send the source's pending parts and their edges, prune stale edges, and account for it all."""
    source = context.partition_key
    tenant, _ = split_source_key(source)
    records, markers = pending_records(the_lake, tenant, platform, source)
    seen_before, expected = scan_keys(the_lake, tenant, platform, source, {r["key"] for r in records})
    edge_rows = pending_edges(records)
    deadletter_root = the_lake.root  # the sink files under deadletter/es/{family}/{tenant}/
    with elasticsearch.get_client() as client:
        setup_indices(client, [tenant])
        rec_stats = index_documents(client, records, family="records", tenant=tenant,
                                    deadletter_root=deadletter_root, run_id=context.run.run_id)
        edge_stats = index_documents(client, edge_rows, family="edges", tenant=tenant,
                                     deadletter_root=deadletter_root, run_id=context.run.run_id)
        reobserved = {r["key"]: r for r in records if r["key"] in seen_before}
        keep: dict[str, set[str]] = {k: set() for k in reobserved}
        for edge in edge_rows:
            if edge["src"] in keep:
                keep[edge["src"]].add(edge_id(edge))
        stale = stale_edge_tombstones(client, tenant, reobserved, keep, edge_version_fields)
        prune_stats = index_documents(client, stale, family="edges", tenant=tenant,
                                      deadletter_root=deadletter_root, run_id=context.run.run_id)
        pruned = prune_stats.created + prune_stats.updated
        live = count_documents(client, tenant, source=source, family="records", include_tombstones=False)
    accounted = all(
        s.created + s.updated + s.noop + s.failed == n
        for s, n in ((rec_stats, len(records)), (edge_stats, len(edge_rows)), (prune_stats, len(stale)))
    )
    if accounted:
        for marker in markers:
            the_lake.write_bytes(marker, marker_body(context.run.run_id))
    return dg.MaterializeResult(
        asset_key=key,
        metadata={
            **{f"records_{k}": v for k, v in rec_stats.as_metadata().items()},
            **{f"edges_{k}": v for k, v in edge_stats.as_metadata().items()},
            "parts_indexed": len(markers),
            "stale_edges_removed": pruned,
            "index_live_documents": live,
        },
        check_results=[r for r in (
            dg.AssetCheckResult(check_name="no_unaccounted_failures", asset_key=key, passed=accounted,
                                metadata={"dead_lettered": rec_stats.failed + edge_stats.failed}),
            dg.AssetCheckResult(check_name="index_count_matches", asset_key=key, passed=live == expected,
                                metadata={"index": live, "normalized_live": expected}),
        ) if dg.AssetCheckKey(key, r.check_name or "") in context.selected_asset_check_keys],
    )
