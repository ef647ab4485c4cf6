"""The ``search_index`` step: pending parts and their edges sent, stale edges pruned, everything accounted for
(the asset and its checks are declared in ``search_index``, which imports this module when the step runs)."""

import dagster as dg

from crawl_assets.index.bootstrap import restore_refresh, setup_indices
from crawl_assets.index.stats import count_documents
from crawl_assets.lake import Lake
from crawl_assets.orchestration.assets.search_index import MISSING_CLUSTER
from crawl_assets.orchestration.resources.elasticsearch import ElasticsearchResource
# looked up here at call time (fault-injection sites patch this module's names)
from crawl_assets.pipeline.index import live_key_count, marker_body, pending_parts, pending_records, scan_keys
from crawl_assets.pipeline.index_load import load
from crawl_assets.pipeline.normalize import split_source_key
from crawl_assets.pipeline.relations_delta import refresh_relations
from crawl_assets.orchestration.steps import StepEnv


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
    relations = refresh_relations(the_lake, tenant, platform, source)  # the edge files the load reads
    if relations.mode != "up_to_date":
        env.log.info(f"{source}: relation tables brought up to date first ({relations.mode})")
    pending = pending_records(the_lake, tenant, platform, source, unmarked)
    seen_before, expected = scan_keys(the_lake, tenant, platform, source, pending.keys)
    with elasticsearch.get_client() as client:
        setup_indices(client, [tenant])
        restore_refresh(client, tenant)  # a load that crashed may have left refresh off
        done = load(client, the_lake, tenant, platform, source, pending, seen_before, run_id=env.run.run_id)
        live = count_documents(client, tenant, source=source, family="records", include_tombstones=False)
    rec_stats, edge_stats, prune_stats = done.records, done.edges, done.pruned
    accounted = all(s.unaccounted == 0 for s in (rec_stats, edge_stats, prune_stats)) and \
        rec_stats.docs == len(pending) and prune_stats.docs == done.stale
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
            "stale_edges_removed": prune_stats.created + prune_stats.updated,
            "index_live_documents": live,
        },
        check_results=index_check_results(key, accounted, rec_stats.failed + edge_stats.failed, live, expected),
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
        check_results=index_check_results(key, True, 0, live, expected),
    )


def index_check_results(key: dg.AssetKey, accounted: bool, dead_lettered: int, live: int,
                        expected: int) -> list[dg.AssetCheckResult]:
    """Both checks' results (the asset body reports those its run did not select as evaluations)."""
    return [
        dg.AssetCheckResult(check_name="no_unaccounted_failures", asset_key=key, passed=accounted,
                            metadata={"dead_lettered": dead_lettered}),
        dg.AssetCheckResult(check_name="index_count_matches", asset_key=key, passed=live == expected,
                            metadata={"index": live, "normalized_live": expected}),
    ]
