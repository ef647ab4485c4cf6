"""The index stage: a source's pending parts and their edges sent, stale edges pruned, everything accounted for.

Only normalized parts not yet indexed are sent (a marker per part in the lake's ``index_state/``, written
after the sink accounted for every document), so a sync indexes what is new or changed. Writes are idempotent
and order-safe (``_id`` = key, external versions), so re-sending after a crash converges to the same index.
With every part accounted for, nothing is sent and only the live documents are counted (``mode: up_to_date``).
"""

from crawl_assets.index.bootstrap import restore_refresh, setup_indices
from crawl_assets.index.readback import count_documents
# looked up here at call time (fault-injection sites patch this module's names)
from crawl_assets.pipeline.index.load import load
from crawl_assets.pipeline.index.pending import live_key_count, marker_body, pending_parts, pending_records, scan_keys
from crawl_assets.pipeline.normalize.batch import split_source_key
from crawl_assets.pipeline.relate.stage import refresh_relations
from crawl_assets.pipeline.index import MISSING_CLUSTER
from crawl_assets.pipeline.stage import Check, StageContext, StageReport


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
