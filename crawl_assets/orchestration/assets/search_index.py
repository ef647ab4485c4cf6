"""``search_index``: the source's records and edges in Elasticsearch, written idempotently.

Only normalized parts not yet indexed are sent (a marker per part in the lake's ``index_state/``,
written after the sink accounted for every document), so a sync indexes what is new or changed.
Writes are idempotent and order-safe (``_id`` = key, external versions), so re-sending after a
crash converges to the same index. With every part accounted for, the step sends nothing (no bulk request,
no index setup) and only counts the source's live documents for its check (``mode``: ``up_to_date``).
"""


from collections.abc import Iterator
from functools import partial

import dagster as dg

from crawl_assets.index.bootstrap import setup_indices
from crawl_assets.index.sink import edge_id, index_documents
from crawl_assets.index.stale_edges import stale_edge_tombstones
from crawl_assets.index.stats import count_documents
from crawl_assets.lake import Lake
from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
from crawl_assets.orchestration.resources.elasticsearch import ElasticsearchResource
# looked up here at call time (fault-injection sites patch this module's names)
from crawl_assets.pipeline.index import (
    EDGE_SOURCE_COLUMNS,
    edge_version_fields,
    live_key_count,
    marker_body,
    pending_parts,
    pending_records,
    record_edge_documents,
    scan_keys,
)
from crawl_assets.pipeline.normalize import split_source_key
from crawl_assets.orchestration.steps import StepEnv, StepFn, as_output

MISSING_CLUSTER = (
    "no Elasticsearch cluster is configured: set CRAWL_ES_URL (e.g. http://localhost:9200; "
    "`docker compose up -d es-0 es-1 es-2` starts a cluster) and reload the code location"
)


def index_checks(key: dg.AssetKey) -> list[dg.AssetCheckSpec]:
    return [
        dg.AssetCheckSpec("no_unaccounted_failures", asset=key, blocking=True,
                          description="Every document sent was indexed, a no-op, or dead-lettered."),
        dg.AssetCheckSpec("index_count_matches", asset=key,
                          description="Live documents of the source in the index = its non-deleted records."),
    ]


def search_index_step(platform: str) -> StepFn:
    return partial(run_search_index, platform)


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
        required_resource_keys={"lake", "elasticsearch"},
    )
    def _index(context: dg.AssetExecutionContext) -> Iterator[dg.MaterializeResult]:
        yield from as_output(run_search_index(platform, StepEnv.of_asset(context)))

    return _index


def run_search_index(platform: str, env: StepEnv) -> dg.MaterializeResult | None:
    """Send the source's pending parts and their edges, prune stale edges, and account for it all. Without a
    cluster: nothing (the output is optional), and the log says what to set."""
    source, key, elasticsearch = env.partition_key, env.asset_key, env.resources.elasticsearch
    if not elasticsearch.hosts:
        # info, not a warning: running without a cluster is a supported setup (the README's)
        env.log.info(f"{source}: {key.to_user_string()} not materialized: {MISSING_CLUSTER}")
        return None
    the_lake = env.resources.lake.lake()
    tenant, _ = split_source_key(source)
    parts, unmarked = pending_parts(the_lake, tenant, platform, source)
    if parts and not unmarked:
        return up_to_date(env, the_lake, elasticsearch, platform, key)
    pending = pending_records(the_lake, tenant, platform, source, unmarked)
    seen_before, expected = scan_keys(the_lake, tenant, platform, source, pending.keys)
    deadletter_root = the_lake.root  # the sink files under deadletter/es/{family}/{tenant}/
    reobserved: dict[str, dict] = {}  # records seen in an earlier part: their edges may have become stale
    keep: dict[str, set[str]] = {}
    edges_sent = 0

    def edge_documents() -> Iterator[dict]:  # a second, narrower pass: only the columns edges read
        nonlocal edges_sent
        for record in pending.records(columns=EDGE_SOURCE_COLUMNS):
            docs = record_edge_documents(record)
            edges_sent += len(docs)
            if record["key"] in seen_before:
                reobserved[record["key"]] = record
                keep[record["key"]] = {edge_id(edge) for edge in docs}
            yield from docs

    with elasticsearch.get_client() as client:
        setup_indices(client, [tenant])
        rec_stats = index_documents(client, pending.records(), family="records", tenant=tenant,
                                    deadletter_root=deadletter_root, run_id=env.run.run_id)
        edge_stats = index_documents(client, edge_documents(), family="edges", tenant=tenant,
                                     deadletter_root=deadletter_root, run_id=env.run.run_id)
        stale = stale_edge_tombstones(client, tenant, reobserved, keep, edge_version_fields)
        prune_stats = index_documents(client, stale, family="edges", tenant=tenant,
                                      deadletter_root=deadletter_root, run_id=env.run.run_id)
        pruned = prune_stats.created + prune_stats.updated
        live = count_documents(client, tenant, source=source, family="records", include_tombstones=False)
    accounted = all(
        s.created + s.updated + s.noop + s.failed == n
        for s, n in ((rec_stats, len(pending)), (edge_stats, edges_sent), (prune_stats, len(stale)))
    )
    if accounted:
        for marker in pending.markers:
            the_lake.write_bytes(marker, marker_body(env.run.run_id))
    return dg.MaterializeResult(
        asset_key=key,
        metadata={
            "mode": "indexed",
            **{f"records_{k}": v for k, v in rec_stats.as_metadata().items()},
            **{f"edges_{k}": v for k, v in edge_stats.as_metadata().items()},
            "parts_indexed": len(pending.markers),
            "stale_edges_removed": pruned,
            "index_live_documents": live,
        },
        check_results=selected_checks(env, key, accounted, rec_stats.failed + edge_stats.failed, live, expected),
    )


def up_to_date(env: StepEnv, the_lake: Lake, elasticsearch: ElasticsearchResource,
               platform: str, key: dg.AssetKey) -> dg.MaterializeResult:
    """Every normalized part is accounted for: nothing is sent; the live count is still checked."""
    source = env.partition_key
    tenant, _ = split_source_key(source)
    expected = live_key_count(the_lake, tenant, platform, source)
    with elasticsearch.get_client() as client:
        live = count_documents(client, tenant, source=source, family="records", include_tombstones=False)
    return dg.MaterializeResult(
        asset_key=key,
        metadata={"mode": "up_to_date", "parts_indexed": 0, "documents_sent": 0, "index_live_documents": live},
        check_results=selected_checks(env, key, True, 0, live, expected),
    )


def selected_checks(env: StepEnv, key: dg.AssetKey, accounted: bool, dead_lettered: int,
                    live: int, expected: int) -> list[dg.AssetCheckResult]:
    return [r for r in (
        dg.AssetCheckResult(check_name="no_unaccounted_failures", asset_key=key, passed=accounted,
                            metadata={"dead_lettered": dead_lettered}),
        dg.AssetCheckResult(check_name="index_count_matches", asset_key=key, passed=live == expected,
                            metadata={"index": live, "normalized_live": expected}),
    ) if dg.AssetCheckKey(key, r.check_name or "") in env.selected_asset_check_keys]
