"""Enrichment assets: ``{platform}/enrichment/{enricher}``, one per configured enricher and platform,
partitioned by source like the rest, downstream of ``normalized_records``. Thin: the work is in
``crawl_assets.enrich`` (no Dagster there).

* ``code_version`` is the enricher's stamp (declared version + hash of its parameters, model file and
  code): a changed stamp shows the asset as stale ("code version changed") in the UI, and materializing it
  re-derives that enricher's features only; records are never rewritten.
* The materialization's data version identifies the features it leaves (the stamp and the normalized
  parts they were read from).
* A tenant-wide enricher's asset writes the source's parts only; its tables are the unpartitioned
  ``enrichment/{enricher}`` asset (``enrichment_tenant.py``), rebuilt once after a batch of sources.
* Incremental: a partition's run reads only normalized parts not yet enriched at the current stamp.
* The features are indexed in the tenant's own index when a cluster is configured (``CRAWL_ES_URL``).

The sync jobs do not run these assets (a sync stays as fast as before). They run by themselves after it:
each carries ``enrichment_condition()`` (Dagster's declarative automation), which the ``enrichment_automation``
sensor (running by default, evaluated by the daemon) turns into runs: a source's enrichment runs once its
``normalized_records`` partition was materialized by a sync (single or batch run), and every source's once
an enricher's stamp changed. ``{platform}_enrich`` and the UI's "Materialize stale" run them by hand.
"""

import hashlib
import logging
from typing import TYPE_CHECKING

import dagster as dg

from crawl_assets.enrich import Enricher, EnrichmentConfigError, load_enrichers, store
from crawl_assets.enrich.config import Unusable
from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE, split_source_key
from crawl_assets.orchestration.resources import ElasticsearchResource, LakeResource

if TYPE_CHECKING:  # imported by the step: the features index loads the Elasticsearch client (~26 MiB)
    from crawl_assets.enrich.index import IndexResult
    from crawl_assets.enrich.run import SourceResult

PREFIX = "enrichment"
log = logging.getLogger(__name__)


AUTOMATION_SENSOR = "enrichment_automation"


def enrichment_condition() -> dg.AutomationCondition:
    """Dagster's ``eager()`` (a partition whose normalized records were updated, or that is new, once no
    upstream run is in progress), plus: a changed code version (the enricher's stamp) requests every
    partition whose records exist, so a new enricher version re-derives without anyone pressing a button."""
    ac = dg.AutomationCondition
    return (ac.in_latest_time_window()
            & (ac.newly_missing() | ac.any_deps_updated() | ac.code_version_changed()).since_last_handled()
            & ~ac.any_deps_missing() & ~ac.any_deps_in_progress() & ~ac.in_progress()).with_label("eager_or_new_stamp")


def enrichment_sensor(platforms: list[str]) -> dg.AutomationConditionSensorDefinition:
    """The sensor that evaluates the enrichment assets' conditions (Dagster's default one is stopped by
    default and would also pick up any other asset's condition)."""
    return dg.AutomationConditionSensorDefinition(
        AUTOMATION_SENSOR, target=dg.AssetSelection.key_prefixes(*([p, PREFIX] for p in platforms), [PREFIX]),
        default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=30,
        description="Enriches a source after a sync updated its normalized records, and every source after an "
                    "enricher's stamp changed (docs/ENRICHMENT.md).")


def enrichment_key(platform: str, name: str) -> dg.AssetKey:
    return dg.AssetKey([platform, PREFIX, name])


def enrichment_selection(platform: str) -> dg.AssetSelection:
    return dg.AssetSelection.key_prefixes([platform, PREFIX])


def tenant_tables_key(name: str) -> dg.AssetKey:
    """The unpartitioned asset of a tenant-wide enricher's tables (all tenants, all platforms)."""
    return dg.AssetKey([PREFIX, name])


def enricher_metadata(enricher: Enricher) -> dict:
    return {"enricher": enricher.name, "enricher_version": enricher.version, "enricher_stamp": enricher.stamp,
            "parameters": dg.MetadataValue.json(enricher.describe()["params"])}


def indexed_check(key: dg.AssetKey) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec("features_indexed", asset=key,
                             description="Every feature document sent was indexed or dead-lettered.")


def indexed_result(results: "list[IndexResult]") -> dg.AssetCheckResult:
    """``features_indexed``: passed when something was indexed and every document was accounted for."""
    return dg.AssetCheckResult(check_name="features_indexed", passed=bool(results) and all(r.accounted for r in results),
                               metadata={"dead_lettered": sum(r.stats.failed for r in results)})


def data_version(lake_parts: list[tuple[str, str]], enricher: Enricher, result: "SourceResult") -> str:
    digest = hashlib.sha256(enricher.stamp.encode())
    for batch_id, version in lake_parts:
        digest.update(f"\0{batch_id}\0{version}".encode())
    if result.tenant is not None:
        digest.update(f"\0tenant\0{result.tenant.generation}".encode())
    return digest.hexdigest()[:16]


def build_enrichment_asset(platform: str, enricher: Enricher, *, cluster_configured: bool) -> dg.AssetsDefinition:
    key = enrichment_key(platform, enricher.name)
    scope = "each record" if enricher.scope == "record" else \
        f"each record of the source; `{'/'.join(tenant_tables_key(enricher.name).path)}` turns them into the tenant's tables"
    description = (f"{enricher.description}\n\nInferred features of {platform} records, kept apart from them "
                   f"(docs/ENRICHMENT.md); computed over {scope}. Stamp `{enricher.stamp}`.")
    indexes = cluster_configured and enricher.scope == "record"  # tenant tables are indexed by their own asset

    @dg.asset(
        key=key,
        deps=[dg.AssetKey([platform, RECORDS_TABLE])],
        partitions_def=SOURCE_PARTITIONS[platform],
        group_name=f"{platform}_{PREFIX}",  # beside the platform group, whose lineage stays readable
        code_version=enricher.stamp,
        automation_condition=enrichment_condition() if not isinstance(enricher, Unusable) else None,  # no failing storm
        kinds={"parquet", "elasticsearch"} if indexes else {"parquet"},
        description=description,
        metadata=enricher_metadata(enricher),
        check_specs=[dg.AssetCheckSpec("every_part_enriched", asset=key,
                                       description="No normalized part of the source failed to enrich."),
                     *([indexed_check(key)] if indexes else [])],
    )
    def _enrich(context: dg.AssetExecutionContext, lake: LakeResource,
                elasticsearch: ElasticsearchResource) -> dg.MaterializeResult:
        usable_or_fail(enricher)
        from crawl_assets.enrich.index import index_features
        from crawl_assets.enrich.run import enrich_source

        the_lake = lake.lake()
        source = context.partition_key
        tenant, _ = split_source_key(source)
        # a tenant-wide enricher's tables: rebuilt once after the batch by the tenant tables asset, not per source
        result = enrich_source(the_lake, enricher, tenant, platform, source, combine=False)
        for failure in result.failed:
            context.log.warning(f"{enricher.name}: part not enriched (tried again next run): {failure}")
        indexed: "IndexResult | None" = None
        if elasticsearch.hosts and indexes:
            with elasticsearch.get_client() as client:
                indexed = index_features(client, the_lake, enricher, tenant, platform, source,
                                         run_id=context.run.run_id, removed_keys=result.removed_keys)
        parts = [(s.batch_id, s.records_version) for s in
                 store.part_states(the_lake, enricher.name, enricher.stamp, tenant, platform, source) if s.current]
        metadata = {"enricher_stamp": enricher.stamp, "parts_enriched": len(result.parts_enriched),
                    "parts_up_to_date": result.parts_up_to_date, "parts_failed": len(result.failed),
                    "parts_removed": result.parts_removed, "records_read": result.records_read,
                    "rows_written": result.rows_written}
        if indexed is not None:
            metadata.update({"features_sent": indexed.stats.docs, "features_failed": indexed.stats.failed,
                             "features_deleted": indexed.deleted, "features_unchanged": indexed.unchanged})
        checks = [dg.AssetCheckResult(check_name="every_part_enriched", passed=not result.failed,
                                      metadata={"failed_parts": len(result.failed), "examples": result.failed[:5]})]
        if indexes:
            checks.append(indexed_result([indexed] if indexed is not None else []))
        return dg.MaterializeResult(metadata=metadata, check_results=checks,
                                    data_version=dg.DataVersion(data_version(parts, enricher, result)))

    return _enrich


def configured_enrichers() -> list[Enricher]:
    """The enabled enrichers (``enrichment.yaml``, else every enricher at its defaults). A bad file costs the
    enrichment only, never the code location: an enricher that cannot be used is logged naming the file and
    key, and its assets stay, failing with that error when run."""
    try:
        enrichers = load_enrichers()
    except Exception as exc:  # noqa: BLE001 - whatever goes wrong, the syncs still load
        log.exception("enrichment disabled until the file is fixed and the code location reloaded: %s", exc)
        return []
    for enricher in enrichers:
        if isinstance(enricher, Unusable):
            log.error("enrichment %s fails until the file is fixed and the code location reloaded: %s",
                      enricher.name, enricher.reason)
    return enrichers


def usable_or_fail(enricher: Enricher) -> None:
    """Fail the step, without retries, when the enricher's configuration cannot be used (the message says why)."""
    try:
        enricher.check_usable()
    except EnrichmentConfigError as exc:
        raise dg.Failure(f"{enricher.name}: {exc}; fix it and reload the code location", allow_retries=False) from None


def enrichment_assets(platform: str, enrichers: list[Enricher], *,
                      cluster_configured: bool) -> list[dg.AssetsDefinition]:
    """One asset per enabled enricher."""
    return [build_enrichment_asset(platform, e, cluster_configured=cluster_configured) for e in enrichers]


def enrichment_job(platform: str) -> "dg.UnresolvedAssetJobDefinition":
    return dg.define_asset_job(
        name=f"{platform}_enrich", selection=enrichment_selection(platform) | dg.AssetSelection.key_prefixes([PREFIX]),
        executor_def=dg.in_process_executor,
        description=f"Enrich {platform} sources: every enricher's features of the chosen partitions (incremental), "
                    f"then the tenant-wide tables once.")
