"""The raw asset of each platform and its step, the Dagster side of collection: finding the registry entry,
one sync per source at a time, health for the scheduler, plottable metadata, an optional full re-sync, export
files (the ``export_file`` source's collector, ``EXPORT_COLLECTOR``), and a collector's plain outcome and errors
turned into Dagster's vocabulary (``Collected`` → ``MaterializeResult``, ``PauseSource`` → the source paused and a
no-retry ``Failure``, ``RetryLater`` → ``RetryRequested``). Collectors (``crawl_assets.sources``) import no Dagster."""

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg

from crawl_assets import settings
from crawl_assets.core.catalog import EXPORT_COLLECTOR, SourceSpec, resolve
from crawl_assets.lake import RawBatch
from crawl_assets.lake.layout import source_folders, sweep
from crawl_assets.orchestration.partition_state import CHECKPOINT_KEY, ObservationCheckpointer
from crawl_assets.orchestration.monitoring.health import load_health, mark_pending, record_success
from crawl_assets.orchestration.monitoring.partition_events import SyncFailure, report_failure
from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
from crawl_assets.orchestration.policies import TRANSIENT_RETRY
from crawl_assets.registry import Registry, SourceEntry, SourceKind
from crawl_assets.registry.models import redact_secrets
from crawl_assets.locks.shared import SourceBusy, source_lock
from crawl_assets.scheduling.policy import SourceHealth
from crawl_assets.registry.store import registry_view
from crawl_assets.sdk.errors import PauseSource, RetryLater
from crawl_assets.sdk.sync import Collected, CollectEnv, LiveCollector
from crawl_assets.sdk.exports import export_fingerprint

RESYNC_TAG = "crawl/resync"  # value "full": forget the checkpoint and read the source again from the start
LOCK_WAIT_SECONDS = 60.0  # how long a run waits for another run syncing the same source
BUSY_RETRY_SECONDS = 60


def source_for_partition(registry: Registry, partition_key: str, platform: str) -> SourceEntry:
    """The registry entry behind a partition; a missing or foreign entry is a permanent failure."""
    try:
        entry = registry.by_key()[partition_key]
    except KeyError:
        raise dg.Failure(
            f"source {partition_key!r} is not in the registry {registry.path} (removed, or invalid: "
            "run `crawl-assets sources list`)",
            allow_retries=False,
        ) from None
    if entry.platform != platform:
        raise dg.Failure(f"source {partition_key!r} is a {entry.platform} source, not {platform}", allow_retries=False)
    return entry


def raw_materialization(entry: SourceEntry, batches: list[RawBatch], extra: dict[str, Any]) -> dg.MaterializeResult:
    """Uniform raw-asset metadata: what was stored this sync (raw batches and their bytes; the collector's
    ``extra`` counts records) and where."""
    meta: dict[str, Any] = {
        "source": entry.key,
        "kind": entry.kind.value,
        "batches_written": len(batches),
        "bytes_written": sum(b.manifest.bytes for b in batches),
        **extra,
    }
    if batches:
        meta["last_batch"] = dg.MetadataValue.path(batches[-1].path)
    return dg.MaterializeResult(metadata=meta)


def build_raw_asset(spec: SourceSpec, step: Callable[[Any], dg.MaterializeResult]) -> dg.AssetsDefinition:
    """The raw asset of a platform: one partition per source of that platform; its body is ``step``
    (``build_raw_step``), the plain function the batch job runs too."""
    platform = spec.platform

    @dg.asset(
        name=spec.raw_asset,
        pool=f"{platform}_sources",
        key_prefix=platform,
        description=f"{spec.raw_description}\n\nOne partition per registered source, keyed "
        f"`{{tenant}}.{platform}.{{name}}`; register one with `{spec.register_hint()}`.",
        partitions_def=SOURCE_PARTITIONS[platform],
        group_name=platform,
        kinds={platform, "json"},
        retry_policy=TRANSIENT_RETRY,
        required_resource_keys={"lake", "registry", *([platform] if spec.has_resource() else [])},
    )
    def _raw(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        return step(context)

    return _raw


def build_raw_step(spec: SourceSpec, live: LiveCollector | None) -> Callable[[Any], dg.MaterializeResult]:
    """The raw step of a platform, called with the asset's context or the batch job's ``StepEnv`` (it uses
    their common attributes only).

    Export-file sources go to the ``export_file`` source's collector for every platform; every other kind to the
    ``live`` collector, which gets the platform's resource (keyed by the platform).
    """
    platform = spec.platform

    def run_raw(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        reg, by_key = registry_view(registry_file(context))
        entry = by_key.get(context.partition_key)
        if entry is None or entry.platform != platform:
            entry = source_for_partition(reg, context.partition_key, platform)  # raises with the reason
        try:
            with source_lock(entry.key, wait_seconds=LOCK_WAIT_SECONDS):
                # temporary files a killed writer of this source left behind: not data, swept under the lock
                sweep(context.resources.lake.lake(), source_folders(entry.tenant, entry.platform, entry.key))
                return _tracked_sync(context, entry, reg)
        except SourceBusy as exc:
            context.log.warning(f"{exc}; retrying in {BUSY_RETRY_SECONDS}s")
            raise dg.RetryRequested(max_retries=10, seconds_to_wait=BUSY_RETRY_SECONDS) from exc

    def _tracked_sync(context: dg.AssetExecutionContext, entry: SourceEntry, reg: Registry) -> dg.MaterializeResult:
        """The sync, with health recorded for the scheduler whatever happens.

        ``pending`` is raised before the collector can store anything and lowered only when this sync
        stored nothing and nothing was pending: a batch run may then skip the derived steps, and a crash
        after raw data was stored never leaves it underived."""
        instance, run_id = context.instance, context.run.run_id
        before = load_health(instance, [entry.key])[entry.key]
        was_pending = before.pending
        before = mark_pending(instance, entry.key, before, True)
        probe = export_fingerprint(entry) if entry.kind is SourceKind.export_file else ""
        started = time.time()
        _maybe_reset_checkpoint(context, entry)
        try:
            result = _sync(context, entry, reg, before.probe)
        except Exception as exc:  # RetryRequested and Failure too: health and the partition show every kind
            report_failure(context, context.asset_key, entry.key, SyncFailure.of(exc))
            raise
        raw_meta = dict(result.metadata or {})
        lag = newest_lag_seconds(raw_meta, before, time.time())
        meta = plottable_metadata(raw_meta, started, before, export=entry.kind is SourceKind.export_file)
        pending = was_pending or bool(meta.get("batches_written"))
        record_success(instance, entry.key, run_id=run_id, probe=probe, before=before, pending=pending, lag_seconds=lag)
        return dg.MaterializeResult(metadata=meta, check_results=result.check_results,
                                    data_version=result.data_version, tags=result.tags)

    def _sync(context: dg.AssetExecutionContext, entry: SourceEntry, reg: Registry, ingested: str) -> dg.MaterializeResult:
        lake = context.resources.lake.lake()
        if entry.kind is not SourceKind.export_file and live is None:
            raise fail_permanently(context, entry, f"{platform} sources of kind {entry.kind.value!r} need a live "
                                   "collector, which this build does not include yet; register an export_file source")
        try:
            if entry.kind is SourceKind.export_file:
                collected: Collected = resolve(EXPORT_COLLECTOR)(entry, reg, lake, context.run.run_id, ingested)
                context.log.info(f"{entry.key}: {collected.metadata['result']}")
            else:
                collect_env = CollectEnv(lake, context.run.run_id, ObservationCheckpointer(context), context.log)
                collected = live(getattr(context.resources, platform), entry, collect_env)
        except PauseSource as exc:
            raise fail_permanently(context, entry, str(exc)) from exc.__cause__
        except RetryLater as exc:
            raise dg.RetryRequested(max_retries=exc.max_retries, seconds_to_wait=exc.seconds) from exc
        return raw_materialization(entry, collected.batches, collected.metadata)

    return run_raw


def registry_file(context: dg.AssetExecutionContext) -> Path | str:
    """The registry the run's ``registry`` resource points at (without reading it): a file or a remote location."""
    path = getattr(context.resources.registry, "path", "")
    return settings.registry_location(path) if path else settings.registry_path()


def _maybe_reset_checkpoint(context: dg.AssetExecutionContext, entry: SourceEntry) -> None:
    """With the run tag ``crawl/resync=full`` (set it when launching a backfill), the first attempt of the
    run saves an empty checkpoint so the collector reads the source from the start (down to its history
    horizon); retries and re-executions of that run resume from what it saved since."""
    if context.run.tags.get(RESYNC_TAG) != "full" or context.retry_number or context.run.parent_run_id:
        return
    context.log.info(f"{entry.key}: full re-sync requested ({RESYNC_TAG}=full): checkpoint reset")
    context.log_event(dg.AssetObservation(
        asset_key=context.asset_key, partition=context.partition_key,
        metadata={CHECKPOINT_KEY: dg.MetadataValue.json({}), "reset_by_run": context.run.run_id},
    ))


_LAG_KEYS = ("newest_event_lag_seconds", "cursor_lag_seconds")


def newest_lag_seconds(meta: dict[str, Any], before: SourceHealth, now: float) -> float | None:
    """Age of the newest item, whatever the collector called it; when a sync saw no item (an unchanged export),
    the last known lag plus the time since; None when nothing is known."""
    for key in _LAG_KEYS:
        value = meta.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    if before.lag_seconds is not None and before.last_success is not None:
        return round(before.lag_seconds + now - before.last_success, 1)
    return None


def plottable_metadata(meta: dict[str, Any], started: float, before: SourceHealth, *, export: bool = False) -> dict[str, Any]:
    """Metadata every sync reports, as numbers so they plot over time in the UI, each meaning something for
    its kind of source.

    Adds ``duration_seconds`` (when the collector did not), ``cursor_age_seconds`` (how old the state this sync
    started from was) and the newest item's age in units one reads at a glance: ``newest_event_lag_hours`` for a
    live source, ``newest_item_age_days`` for an export file (an export's newest item is as old as the file, not
    late); the collector's lag in seconds is left out. A live source without them reports zero ``requests`` and
    ``rate_limit_wait_seconds``; an export file reports neither (zero by construction). Drops empty values (a
    null does not plot).
    """
    now = time.time()
    meta.setdefault("duration_seconds", round(now - started, 3))
    if before.last_success is not None:
        meta["cursor_age_seconds"] = round(started - before.last_success, 1)
    lag = newest_lag_seconds(meta, before, now)
    for key in _LAG_KEYS:
        meta.pop(key, None)
    if lag is not None:
        meta["newest_item_age_days" if export else "newest_event_lag_hours"] = round(lag / (86400 if export else 3600), 2)
    if not export:
        meta.setdefault("requests", 0)
        meta.setdefault("rate_limit_wait_seconds", 0.0)
    return {k: v for k, v in meta.items() if v is not None}


def pause_source(registry_path: str | os.PathLike[str], key: str, reason: str) -> None:
    """Take a source out of scheduling after a permanent error (bad credentials, private channel).

    The reason is shown by ``crawl-assets sources show``; ``sources resume`` puts it back.
    """
    from crawl_assets.registry import SourceStatus, update_registry

    update_registry(registry_path, lambda reg: reg.set_status(key, SourceStatus.paused, reason[:500]))


def fail_permanently(context: dg.AssetExecutionContext, entry: SourceEntry, reason: str) -> dg.Failure:
    """Pause the source with the reason and return the no-retry failure to raise. The reason often quotes a
    server's error text, which may echo a credential: redacted before it goes anywhere (the registry, the
    run log, the Failure and its metadata, the partition's observation copied from it)."""
    reason = redact_secrets(reason)
    pause_source(registry_file(context), entry.key, reason)
    context.log.error(f"{entry.key}: paused: {reason}")
    return dg.Failure(f"source {entry.key!r} paused: {reason}", allow_retries=False, metadata={"paused_reason": reason})
