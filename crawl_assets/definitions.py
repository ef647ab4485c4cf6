"""The one ``Definitions`` object: assets by platform, sync jobs, sensors and resources, built from the
settings read once (``Settings.from_env()``) when the code location loads."""

from __future__ import annotations

import dagster as dg

from crawl_assets.settings import Settings
from crawl_assets.orchestration.assets import derived_assets, raw_asset
from crawl_assets.orchestration.assets.enrichment import configured_enrichers, enrichment_assets, enrichment_job, enrichment_sensor
from crawl_assets.orchestration.assets.enrichment_tenant import tenant_tables_assets, tenant_tables_job
from crawl_assets.orchestration.assets.retention import retention, retention_job, retention_schedule
from crawl_assets.orchestration.catalog_notes import describe_empty_platform, platforms_with_sources
from crawl_assets.orchestration.sensors.webhook_sensor import build_webhook_sensor
from crawl_assets.orchestration.jobs import build_batch_job, build_sync_job
from crawl_assets.orchestration.monitoring.checks import build_health_checks, health_check_job_and_schedule, sources_asset
from crawl_assets.orchestration.resources import ElasticsearchResource, LakeResource, RegistryResource
from crawl_assets.orchestration.sensors.index_backlog import build_index_backlog_sensor
from crawl_assets.orchestration.sensors.registry_sensor import build_registry_sensor
from crawl_assets.orchestration.sensors.scheduling import build_scheduling_sensor
from crawl_assets.core import catalog
from crawl_assets.core.private import owner_only
from crawl_assets.sdk.rest_resource import source_resource


def build_definitions(config: Settings | None = None) -> dg.Definitions:
    """Per platform: the asset chain, single-source and batch sync jobs (with the index step when ``CRAWL_ES_URL``
    is set: ``{platform}_sync``, ``{platform}_sync_batch``; without it ``…_no_index``), a scheduling sensor
    driving them and the source health checks."""
    assets: list[dg.AssetsDefinition | dg.AssetSpec] = []
    jobs: list = []
    config = config or Settings.from_env()
    sensors: list[dg.SensorDefinition] = [build_registry_sensor(config.registry_sensor_interval_seconds)]
    checks: list[dg.AssetChecksDefinition] = []
    es = config.elasticsearch
    # no CRAWL_ES_URL: no hosts, and search_index reports the missing setting instead of guessing a cluster
    resources: dict[str, dg.ConfigurableResource] = {
        "lake": LakeResource(), "registry": RegistryResource(),
        "elasticsearch": ElasticsearchResource.from_settings(es, secrets_as_env=True),
        **{platform: source_resource(spec) for platform, spec in catalog.catalog().specs.items() if spec.has_resource()},
    }
    webhook_jobs: dict[str, dg.UnresolvedAssetJobDefinition] = {}
    index_jobs: list[dg.UnresolvedAssetJobDefinition] = []
    with_index = bool(es.url.strip())
    in_use = platforms_with_sources()
    enrichers = configured_enrichers()
    enriched: list[str] = []
    for platform, spec in catalog.catalog().specs.items():
        raw = raw_asset(platform)
        chain = [raw, *derived_assets(platform, raw, cluster_configured=with_index)]
        sources = sources_asset(platform)
        if in_use is not None and platform not in in_use:
            sources, raw, *_ = described = describe_empty_platform(platform, [sources, *chain])
            chain = described[1:]
        assets += [sources, *chain]
        single = {flag: build_sync_job(platform, raw, include_index=flag) for flag in (True, False)}
        index_jobs.append(single[True])
        batch = {flag: build_batch_job(platform, chain, include_index=flag, resource_defs=resources) for flag in (True, False)}
        # only the pair this configuration runs (with the index step when a cluster is set): half the sync jobs in
        # the UI's list, and the one a user backfills is the only one there
        jobs += [single[with_index], batch[with_index]]
        sensors.append(build_scheduling_sensor(platform, single[with_index], batch[with_index], config))
        if spec.webhook is not None:
            webhook_jobs[platform] = single[with_index]
        checks += build_health_checks(platform, sources)
        if spec.discovery is not None:  # candidates for a person to approve (crawl-assets discover)
            from crawl_assets.orchestration.assets.discovery import discovery_asset

            assets.append(discovery_asset(platform))
        # -- enrichment (docs/ENRICHMENT.md): after normalized_records, by its own sensor, not in the sync jobs -
        enrichment = enrichment_assets(platform, enrichers, cluster_configured=with_index)
        if in_use is not None and platform not in in_use and enrichment:
            enrichment = describe_empty_platform(platform, enrichment)
        if enrichment:
            assets += enrichment
            jobs.append(enrichment_job(platform))
            enriched.append(platform)
    sensors.append(build_webhook_sensor(webhook_jobs))
    if with_index:  # what was synced before the cluster was configured (orchestration/sensors/index_backlog.py)
        sensors.append(build_index_backlog_sensor(index_jobs, es.url))
    if enriched:  # after a sync, by declarative automation (crawl_assets.orchestration.assets.enrichment)
        # the tenant-wide tables: once after a batch of sources, not in each source's run
        tenant_tables = tenant_tables_assets(enrichers, enriched, cluster_configured=with_index)
        if tenant_tables:
            assets += tenant_tables
            jobs.append(tenant_tables_job())
        sensors.append(enrichment_sensor(enriched))
    check_job, check_schedule = health_check_job_and_schedule(checks)
    return dg.Definitions(
        assets=[*assets, retention],
        asset_checks=checks,
        jobs=[*jobs, check_job, retention_job],
        schedules=[check_schedule, retention_schedule],
        sensors=sensors,
        # Every asset job (UI materializations and backfills included) runs its steps in the run worker:
        # ~5 s per run instead of ~10 s, and killing the worker stops the sync (no orphaned step process).
        executor=dg.in_process_executor,
        resources=resources,
    )


owner_only()  # the code location's and each run's files: 0600, folders 0700
defs = build_definitions()
