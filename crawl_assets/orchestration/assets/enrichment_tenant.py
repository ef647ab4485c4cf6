"""Tenant-wide enrichment tables: ``enrichment/{enricher}``, one unpartitioned asset per tenant-wide enricher
(near-duplicate clusters, account activity, trends), downstream of that enricher's per-source assets on
every platform. Thin: ``crawl_assets.enrich.run.combine_tenants`` does the work.

Why a separate asset: a tenant's tables read every source's feature parts, so rebuilding them in each
source's run made a batch sync of N sources cost N full rebuilds. The per-source assets now only extract
(incremental, per part); this asset rebuilds each tenant's tables **once** after them. Its automation
condition waits until no run of any upstream partition is queued or in progress (the sensor requests a
batch's N sources in one tick, so they are all in progress together), then asks for one run (where runs
never pause, at most once an hour without waiting: ``AT_LEAST_HOURLY``); a tenant
whose inputs did not change is left as it is (``inputs_generation``). ``{platform}_enrich`` (by hand)
selects it too, and ``enrich_tenant_tables`` runs it alone.
"""

import hashlib

import dagster as dg

from crawl_assets.enrich import Enricher
from crawl_assets.enrich.run import TenantBusy, combine_tenants
from crawl_assets.enrich.config import Unusable
from crawl_assets.orchestration.assets.enrichment import (PREFIX, enricher_metadata, enrichment_key, indexed_check,
                                                          indexed_result, tenant_tables_key, usable_or_fail)
from crawl_assets.orchestration.resources import ElasticsearchResource, LakeResource

TENANT_TABLES_JOB = "enrich_tenant_tables"
# Where sources are enriched without pause (some run always queued or in progress), the tables do not wait
# for a quiet moment longer than until the next tick of this schedule.
AT_LEAST_HOURLY = "0 * * * *"


def tenant_tables_condition() -> dg.AutomationCondition:
    """Once after the sources: some upstream partition was materialized since this asset was last
    requested, and none is queued or in progress now (or an hour began since it was last requested), and
    this asset is not in progress itself."""
    ac = dg.AutomationCondition
    return (ac.any_deps_match(ac.newly_updated()).since_last_handled() & ~ac.in_progress()
            & (~ac.any_deps_in_progress() | ac.cron_tick_passed(AT_LEAST_HOURLY).since_last_handled())
            ).with_label("once_after_the_sources")


def build_tenant_tables_asset(enricher: Enricher, platforms: list[str], *,
                              cluster_configured: bool) -> dg.AssetsDefinition:
    key = tenant_tables_key(enricher.name)
    tables = ", ".join(f"`{t}`" for t in getattr(enricher, "tables", ()))

    @dg.asset(
        key=key,
        deps=[enrichment_key(platform, enricher.name) for platform in platforms],
        group_name=f"{PREFIX}_tenant_tables",
        code_version=enricher.stamp,
        automation_condition=tenant_tables_condition() if not isinstance(enricher, Unusable) else None,
        kinds={"parquet", "elasticsearch"} if cluster_configured else {"parquet"},
        description=f"{enricher.description}\n\nEach tenant's {tables} (all its sources and platforms), rebuilt once "
                    f"after a batch of sources was enriched, only where an input changed (docs/ENRICHMENT.md). "
                    f"Stamp `{enricher.stamp}`.",
        metadata=enricher_metadata(enricher),
        check_specs=[indexed_check(key)] if cluster_configured else [],
    )
    def _tables(context: dg.AssetExecutionContext, lake: LakeResource,
                elasticsearch: ElasticsearchResource) -> dg.MaterializeResult:
        usable_or_fail(enricher)
        # imported here: the features index loads the Elasticsearch client (~26 MiB), not needed to load definitions
        from crawl_assets.enrich.index import IndexResult, index_tenant

        the_lake = lake.lake()
        try:
            results = combine_tenants(the_lake, enricher)
        except TenantBusy as exc:
            raise dg.RetryRequested(max_retries=5, seconds_to_wait=30) from exc
        indexed: list[IndexResult] = []
        if elasticsearch.hosts and cluster_configured:
            with elasticsearch.get_client() as client:
                indexed = [index_tenant(client, the_lake, enricher, tenant, run_id=context.run.run_id)
                           for tenant in results]
        rebuilt = sorted(t for t, r in results.items() if r.rebuilt)
        metadata: dict = {"enricher_stamp": enricher.stamp, "tenants": len(results), "tenants_rebuilt": len(rebuilt),
                          "rebuilt": dg.MetadataValue.json(rebuilt[:50])}
        for result in results.values():
            for table, rows in result.rows.items():
                metadata[f"tenant_{table}_rows"] = metadata.get(f"tenant_{table}_rows", 0) + rows  # (rebuilt ones)
        if indexed:
            metadata.update({"features_sent": sum(r.stats.docs for r in indexed),
                             "features_failed": sum(r.stats.failed for r in indexed),
                             "features_deleted": sum(r.deleted for r in indexed),
                             "features_unchanged": sum(r.unchanged for r in indexed)})
        digest = hashlib.sha256(enricher.stamp.encode())
        for tenant in sorted(results):
            digest.update(f"\0{tenant}\0{results[tenant].generation}".encode())
        return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(digest.hexdigest()[:16]),
                                    check_results=[indexed_result(indexed)] if cluster_configured else [])

    return _tables


def tenant_tables_assets(enrichers: list[Enricher], platforms: list[str], *,
                         cluster_configured: bool) -> list[dg.AssetsDefinition]:
    """One asset per enabled tenant-wide enricher (none without platforms)."""
    if not platforms:
        return []
    return [build_tenant_tables_asset(e, platforms, cluster_configured=cluster_configured)
            for e in enrichers if e.scope == "tenant"]


def tenant_tables_job() -> "dg.UnresolvedAssetJobDefinition":
    return dg.define_asset_job(
        name=TENANT_TABLES_JOB, selection=dg.AssetSelection.key_prefixes([PREFIX]), executor_def=dg.in_process_executor,
        description="Rebuild every tenant's tenant-wide enrichment tables whose inputs changed (one run for all).")
