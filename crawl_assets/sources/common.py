"""What every raw asset shares: finding its registry entry, and ingesting an export file once."""


import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg

from crawl_assets.policies import TRANSIENT_RETRY
from crawl_assets.lake import Lake, RawBatch
from crawl_assets.lake.layout import new_batch_id
from crawl_assets.partitions import SOURCE_PARTITIONS
from crawl_assets.registry import Registry, SourceEntry, SourceKind


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


def export_path(entry: SourceEntry, registry: Registry) -> Path:
    """An export's file: absolute, or relative to the registry file's folder."""
    path = Path(os.path.expanduser(entry.identifier))
    return path if path.is_absolute() else (registry.path.parent / path).resolve()


@dataclass(frozen=True)
class ExportIngest:
    batch: RawBatch | None
    reason: str
    metadata: dict[str, Any]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def ingest_export_file(entry: SourceEntry, registry: Registry, lake: Lake, run_id: str | None) -> ExportIngest:
    """Copy an export file into the raw layer unless the same content is already there.

    The content hash, not the file's name or time, decides: re-exporting the same chat twice stores
    it once, and an export that grew is stored as a new observation.
    """
    path = export_path(entry, registry)
    if not path.is_file():
        raise dg.Failure(
            f"export file for source {entry.key!r} not found: {path} (registry {registry.path}, field 'identifier')",
            allow_retries=False,
        )
    sha = _sha256(path)
    for previous in lake.raw_batches(entry.tenant, entry.platform, entry.key):
        if previous.manifest.sha256 == sha:
            return ExportIngest(None, f"unchanged: already stored as batch {previous.manifest.batch_id}", {"file": str(path)})
    with path.open("rb") as fh:
        batch = lake.write_raw_batch(
            tenant=entry.tenant,
            platform=entry.platform,
            source=entry.key,
            batch_id=new_batch_id(run_id, 0),
            fmt=entry.export_format or "",
            method="export",
            run_id=run_id,
            stream=fh,
            extra={"file_name": path.name, "file_size": path.stat().st_size},
        )
    if batch.manifest.sha256 != sha:
        raise dg.Failure(f"export file {path} changed while it was being read; it will be read again next sync")
    return ExportIngest(batch, "stored", {"file": str(path), "bytes": batch.manifest.bytes})


def raw_materialization(entry: SourceEntry, batches: list[RawBatch], extra: dict[str, Any]) -> dg.MaterializeResult:
    """Uniform raw-asset metadata: what was stored this sync and where."""
    meta: dict[str, Any] = {
        "source": entry.key,
        "kind": entry.kind.value,
        "batches_written": len(batches),
        "items_written": sum(b.manifest.items for b in batches),
        "bytes_written": sum(b.manifest.bytes for b in batches),
        **extra,
    }
    if batches:
        meta["last_batch"] = dg.MetadataValue.path(batches[-1].path)
    return dg.MaterializeResult(metadata=meta)


LiveCollector = Callable[[dg.AssetExecutionContext, SourceEntry, Lake], dg.MaterializeResult]


def build_raw_asset(
    *,
    platform: str,
    name: str,
    description: str,
    live: LiveCollector | None = None,
    live_resource_keys: frozenset[str] = frozenset(),
) -> dg.AssetsDefinition:
    """The raw asset of a platform: one partition per source of that platform.

    Export-file sources are ingested here for every platform; every other kind goes to the
    platform's ``live`` collector, which gets its own resources through ``live_resource_keys``.
    """

    @dg.asset(
        name=name,
        key_prefix=platform,
        description=description,
        partitions_def=SOURCE_PARTITIONS[platform],
        group_name=platform,
        kinds={platform, "json"},
        retry_policy=TRANSIENT_RETRY,
        required_resource_keys={"lake", "registry", *live_resource_keys},
    )
    def _raw(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        reg = context.resources.registry.load()
        entry = source_for_partition(reg, context.partition_key, platform)
        lake = context.resources.lake.lake()
        if entry.kind is SourceKind.export_file:
            ingest = ingest_export_file(entry, reg, lake, context.run.run_id)
            context.log.info(f"{entry.key}: {ingest.reason}")
            batches = [ingest.batch] if ingest.batch else []
            return raw_materialization(entry, batches, {"result": ingest.reason, **ingest.metadata})
        if live is None:
            raise dg.Failure(
                f"source {entry.key!r}: {platform} sources of kind {entry.kind.value!r} need a live collector, "
                "which this build does not include yet; register an export_file source instead",
                allow_retries=False,
            )
        return live(context, entry, lake)

    return _raw


def pause_source(registry_path: str | os.PathLike[str], key: str, reason: str) -> None:
    """Take a source out of scheduling after a permanent error (bad credentials, private channel).

    The reason is shown by ``crawl-assets sources show``; ``sources resume`` puts it back.
    """
    from crawl_assets.registry import SourceStatus, update_registry

    update_registry(registry_path, lambda reg: reg.set_status(key, SourceStatus.paused, reason[:500]))


def fail_permanently(context: dg.AssetExecutionContext, entry: SourceEntry, reason: str) -> dg.Failure:
    """Pause the source with the reason and return the no-retry failure to raise."""
    registry_path = context.resources.registry.load().path
    pause_source(registry_path, entry.key, reason)
    context.log.error(f"{entry.key}: paused: {reason}")
    return dg.Failure(f"source {entry.key!r} paused: {reason}", allow_retries=False, metadata={"paused_reason": reason})
