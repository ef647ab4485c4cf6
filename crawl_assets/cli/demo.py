"""``crawl-assets demo``: register the bundled sample sources, materialize everything for them and
evaluate the source health checks once.

Offline and self-contained: a fresh ``DAGSTER_HOME`` (SQLite), the lake under it, and sample exports
shipped in the package (synthetic, no real person's data). The runs land in the instance, so
``crawl-assets ui`` (``dg dev`` on the same ``DAGSTER_HOME``) shows them with their lineage.
"""

from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path

import click

from crawl_assets import settings
from crawl_assets.cli.common import install_instance_yaml

DEMO_TENANT = "demo"
# Run logs stay in the instance (and the UI); the console shows warnings and the summary only.
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def sample_file(relative: str) -> Path:
    return Path(str(resources.files("crawl_assets") / "sample_data" / relative))


def place_sample(relative: str) -> str:
    """Copy a bundled sample export under the demo tenant's import root (export files are read only from
    there); returns its path relative to that folder. A file already there with the same bytes is kept."""
    from crawl_assets.sdk.exports import tenant_import_root

    source = sample_file(relative)
    target = tenant_import_root(DEMO_TENANT) / "samples" / relative
    if not (target.is_file() and not target.is_symlink() and target.read_bytes() == source.read_bytes()):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.copying")
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    return f"samples/{relative}"


def register_samples(registry_path: Path | str) -> list[str]:
    """Place the sample exports under the import root and add their sources unless present; their keys."""
    from crawl_assets.core import catalog
    from crawl_assets.registry import SourceEntry, load_registry

    reg = load_registry(registry_path)
    keys = []
    for spec in catalog.catalog().specs.values():
        for sample in spec.samples:  # the sample exports each source type bundles
            if not sample_file(sample.path).exists():
                continue
            entry = SourceEntry(name=sample.name, tenant=DEMO_TENANT, platform=spec.platform, kind="export_file",
                                identifier=place_sample(sample.path), options={"format": sample.format})
            existing = reg.by_key().get(entry.key)
            if existing is not None and existing.identifier != entry.identifier:  # an earlier demo's path
                reg.remove(entry.key)
                existing = None
            if existing is None:
                reg.add(entry)
            keys.append(entry.key)
    reg.save()
    return keys


@click.command("demo")
@click.option("--home", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="DAGSTER_HOME to use (default: $DAGSTER_HOME, else ./.crawl_home).")
@click.option("--es-url", default=None, help="Elasticsearch URL to index into (default: $CRAWL_ES_URL; unset skips indexing).")
def demo(home: Path | None, es_url: str | None) -> None:
    """Run the whole graph on the bundled sample data and print what it produced."""
    from crawl_assets.orchestration.resources import CredentialsInUrl, check_hosts

    home_given = home is not None
    home = settings.use_dagster_home(home)
    if es_url:
        settings.export(CRAWL_ES_URL=es_url)  # the definitions (imported below) read it
    try:
        check_hosts(settings.elasticsearch().host_list())
    except CredentialsInUrl as exc:
        raise click.UsageError(str(exc)) from None
    install_instance_yaml(home)

    import dagster as dg

    from crawl_assets.definitions import defs

    with dg.DagsterInstance.get() as instance:
        failures = _materialize_samples(instance, defs, home, home_given)
    if failures:
        raise SystemExit(1)


def _materialize_samples(instance, defs, home: Path, home_given: bool) -> int:
    """Register the samples, add their partitions, run each sample's sync job and the health checks once;
    the number of failed runs."""
    import dagster as dg

    from crawl_assets.cli.sync import run_figures
    from crawl_assets.orchestration.run_names import sync_job_name
    from crawl_assets.lake import Lake
    from crawl_assets.registry import load_registry
    from crawl_assets.orchestration.sensors.registry_sensor import partition_changes
    from crawl_assets.core.catalog import platforms

    registry_path = settings.registry_path()
    keys = register_samples(registry_path)
    reg = load_registry(registry_path)
    current = {f"{p}_sources": set(instance.get_dynamic_partitions(f"{p}_sources")) for p in platforms()}
    for req in partition_changes(reg, current)[0]:
        if isinstance(req, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))

    indexing = bool(settings.elasticsearch().url)
    failures = 0
    synced: list[str] = []
    lake = Lake(settings.lake_root())
    click.echo(f"DAGSTER_HOME  {home}\nregistry      {registry_path}\nlake          {lake.root}\n")
    for key in keys:
        platform = key.split(".")[1]
        job = defs.resolve_job_def(sync_job_name(platform, indexing))
        click.echo(f"syncing {key} ...", err=True)
        result = job.execute_in_process(partition_key=key, instance=instance, raise_on_error=False, run_config=QUIET)
        if not result.success:
            failures += 1
            click.echo(f"{key}: run {result.run_id} FAILED; see the run in the UI", err=True)
            continue
        synced.append(key)
        meta = run_figures(result)
        click.echo(f"{key}")
        click.echo(f"  run {result.run_id}")
        click.echo(f"  records {meta['records']}, rejected {meta['rejected']}, edges {meta['edges']}")
        if meta["by_type"]:
            click.echo("  edges by type: " + ", ".join(f"{t} {n}" for t, n in meta["by_type"].items()))
        if indexing:
            click.echo(f"  indexed: {meta['indexed']}")
    jobs = {j.name for j in defs.resolve_all_job_defs()}
    tenant_tables: list[str] = []
    for key in [k for k in synced if f"{k.split('.')[1]}_enrich" in jobs]:  # the features (docs/ENRICHMENT.md): their own job, after the syncs
        result = defs.resolve_job_def(f"{key.split('.')[1]}_enrich").execute_in_process(
            partition_key=key, instance=instance, raise_on_error=False, run_config=QUIET)
        if not result.success:
            failures += 1
            click.echo(f"{key}: enrichment run {result.run_id} FAILED; see the run in the UI", err=True)
            continue
        mine, tenant_tables = enriched_phrases(_materializations(result))
        click.echo(f"{key} enriched: " + ", ".join(mine))
    if tenant_tables:  # rebuilt after each source: the last run's are the tenant's, over all its sources
        click.echo(f"tenant {DEMO_TENANT} (all its sources): " + ", ".join(tenant_tables))
    # The schedule runs them every 10 minutes; run them once now so the UI shows results, not "not evaluated".
    checks = defs.resolve_job_def("source_health_checks").execute_in_process(
        instance=instance, raise_on_error=False, run_config=QUIET)
    if not checks.success:
        failures += 1
        click.echo(f"source health checks: run {checks.run_id} FAILED; see the run in the UI", err=True)
    click.echo(f"\nnormalized records: {lake.root}/tables/normalized_records/{DEMO_TENANT}/")
    click.echo(f"relation edges:     {lake.root}/tables/relation_edges/{DEMO_TENANT}/")
    if not indexing:
        click.echo("index step skipped: no Elasticsearch configured. Start one with "
                   "`docker compose up -d es-0 es-1 es-2` and re-run with CRAWL_ES_URL=http://localhost:9200.")
    click.echo("\nOpen the UI: crawl-assets ui" + (f" --home {home}" if home_given else "") + "   (then http://127.0.0.1:3000)")
    return failures


def _materializations(result) -> list[tuple[list[str], dict]]:
    """A run's materializations: (asset key path, metadata values)."""
    out = []
    for event in result.get_asset_materialization_events():
        mat = event.event_specific_data.materialization
        out.append((list(mat.asset_key.path), {k: v.value for k, v in mat.metadata.items()}))
    return out


def enriched_phrases(materializations: list[tuple[list[str], dict]]) -> tuple[list[str], list[str]]:
    """What an enrichment run did, as (phrases of the source's own features, phrases of the tenant-wide tables):
    an enricher with nothing new to read is "unchanged" (not "0 rows"); the tables count the tenant's rows."""
    mine, tenant = [], []
    for path, meta in materializations:
        if len(path) == 2:  # enrichment/{name}: a tenant-wide enricher's tables
            tables = {k.removeprefix("tenant_").removesuffix("_rows"): v for k, v in meta.items()
                      if k.startswith("tenant_") and k.endswith("_rows")}
            tenant.append(f"{path[-1]} ({', '.join(f'{v} {k}' for k, v in tables.items()) or 'unchanged'})")
        elif not meta.get("parts_enriched") and not meta.get("parts_failed"):
            mine.append(f"{path[-1]} unchanged")
        else:
            mine.append(f"{path[-1]} ({meta.get('rows_written', 0)} rows from {meta.get('records_read', 0)} records)")
    return mine, tenant
