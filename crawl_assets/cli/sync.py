"""``crawl-assets sync SOURCE``: sync one registered source now, in this process, through the job the UI
launches for it (``{platform}_sync``, or ``{platform}_sync_no_index`` without a cluster): the same chain of
steps, runs and metadata in the instance, the same per-source lock (a run of the source already going makes
this one wait, then fail)."""

from __future__ import annotations

import re
from typing import Any

import click

from crawl_assets import settings
from crawl_assets.cli.common import fail, install_instance_yaml, open_registry
from crawl_assets.registry import SourceEntry


# The run's log stays in the instance (the UI); the console gets this command's summary or its one-line reason.
SILENT = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def _reason(message: str) -> str:
    """The first line of a step's error without its exception class (``dagster...Failure: source ... paused``)."""
    first = message.strip().splitlines()[0] if message.strip() else "no message"
    return re.sub(r"^[\w.]*(Error|Exception|Failure|Interrupt)\w*: ", "", first)


@click.command("sync")
@click.argument("source")
@click.option("--full", is_flag=True, help="Read the source again from the start (the run tag crawl/resync=full).")
def sync(source: str, full: bool) -> None:
    """Sync one source now (by key, or by name when unique): collect, normalize, relate, and index when
    CRAWL_ES_URL is set. Exits 1 when the run fails, with the reason."""
    reg = open_registry(None, strict=False)
    try:
        entry = reg.get(source)
    except KeyError as exc:
        fail(exc.args[0])
    indexing = bool(settings.elasticsearch().url)
    failed, meta = sync_now(entry, full=full)
    if failed:
        fail(failed, code=1)
    click.echo(f"{entry.key}\n  run {meta['run_id']}\n  records {meta['records']}, rejected {meta['rejected']}, "
               f"edges {meta['edges']}" + (f"\n  indexed: {meta['indexed']}" if indexing else
                                           "\n  index step skipped: no Elasticsearch configured (CRAWL_ES_URL)"))


def sync_now(entry: SourceEntry, *, full: bool = False) -> tuple[str | None, dict[str, Any]]:
    """Run ``entry``'s sync job in this process: (the failure's reason or None, the run's figures)."""
    from crawl_assets.orchestration.run_names import PLATFORM_TAG, sync_job_name
    from crawl_assets.orchestration.raw_step import RESYNC_TAG

    home = settings.use_dagster_home()
    install_instance_yaml(home)
    indexing = bool(settings.elasticsearch().url)

    import dagster as dg

    from crawl_assets.definitions import defs

    job = defs.resolve_job_def(sync_job_name(entry.platform, indexing))
    tags = {PLATFORM_TAG: entry.platform, **({RESYNC_TAG: "full"} if full else {})}
    with dg.DagsterInstance.get() as instance:
        partitions = f"{entry.platform}_sources"
        if not instance.has_dynamic_partition(partitions, entry.key):  # what the registry sensor would do next tick
            instance.add_dynamic_partitions(partitions, [entry.key])
        click.echo(f"syncing {entry.key} through {job.name} ...", err=True)
        result = job.execute_in_process(partition_key=entry.key, instance=instance, raise_on_error=False,
                                        run_config=SILENT, tags=tags)
    if not result.success:
        reasons = [_reason(e.step_failure_data.error.message) for e in result.get_step_failure_events()
                   if e.step_failure_data and e.step_failure_data.error]
        return f"{entry.key}: run {result.run_id} failed: {reasons[0] if reasons else 'see the run in the UI'}", {}
    return None, {**run_figures(result), "run_id": result.run_id}


def run_figures(result) -> dict:
    """A sync run's figures for a summary (records, rejected, edges by type, indexed), read from its
    materialization events."""
    out: dict = {"records": 0, "rejected": 0, "edges": 0, "by_type": {}, "indexed": ""}
    for event in result.get_asset_materialization_events():
        mat = event.event_specific_data.materialization
        name = mat.asset_key.path[-1]
        meta = {k: v.value for k, v in mat.metadata.items()}
        if name == "relation_edges":
            out["records"] = meta.get("records", 0)
            out["edges"] = meta.get("edges", 0)
            out["by_type"] = {k.removeprefix("edges_"): v for k, v in meta.items() if k.startswith("edges_") and k != "edges"}
        elif name == "normalized_records":
            out["rejected"] = meta.get("rejected", 0)
        elif name == "search_index":
            out["indexed"] = ", ".join(f"{k} {v}" for k, v in meta.items() if k.startswith("records_") and isinstance(v, int))
    return out
