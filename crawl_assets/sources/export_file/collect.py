"""The ``export_file`` source's collector: the file into the raw layer, once per content, and counted in records.

A refused or unreadable file, or a bad option, is a ``PauseSource`` naming the file and the registry field (the
orchestration pauses the source, as for any source); a file that changed while it was read is retried.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

import orjson

from crawl_assets.core import catalog
from crawl_assets.core.display import shown
from crawl_assets.core.catalog import resolve
from crawl_assets.lake import Lake, RawBatch
from crawl_assets.lake.layout import new_batch_id
from crawl_assets.normalize.context import normalize_options
from crawl_assets.registry import Registry, SourceEntry
from crawl_assets.sdk.errors import PauseSource
from crawl_assets.sdk.exports import ExportPathRefused, file_fingerprint, open_export, tenant_import_root
from crawl_assets.sdk.sync import Collected
from crawl_assets.sources.export_file.stats import export_record_stats, nothing_stored


class ExportChanged(RuntimeError):
    """The file changed while it was being read: nothing is kept, the step's retry policy reads it again."""


@dataclass(frozen=True)
class ExportIngest:
    batch: RawBatch | None
    reason: str
    metadata: dict[str, Any]


def _sha256(fh: Any) -> str:
    digest = hashlib.sha256()
    while chunk := fh.read(1 << 20):
        digest.update(chunk)
    return digest.hexdigest()


def ingest_export_file(entry: SourceEntry, registry: Registry, lake: Lake, run_id: str | None,
                       ingested: str = "") -> ExportIngest:
    """Copy an export file into the raw layer unless the same content is already there.

    The file must be under the tenant's import root (``crawl_assets.sdk.exports``; checked again here,
    while opening). The content hash, not the file's name or time, decides: re-exporting the same chat
    twice stores it once, and an export that grew is stored as a new observation.

    ``ingested`` is the file's fingerprint (``exports.file_fingerprint``) taken before the last successful
    sync of the source (its health's probe): when the open file still has it and the source's newest batch
    was stored with the same options, that content is in the lake and the file is not read again (a no-op
    sync of a large export costs a ``stat``, not a hash of every byte).
    """
    try:
        fd = open_export(entry)
    except ExportPathRefused as exc:
        raise PauseSource(f"{exc} (registry {registry.path}, field 'identifier')") from None
    except OSError as exc:
        raise PauseSource(
            f"export file for source {entry.key!r} cannot be opened: {shown(entry.identifier)} under "
            f"{tenant_import_root(entry.tenant)}: {exc.strerror or exc} (registry {registry.path}, field 'identifier')"
        ) from None
    try:  # stored with the batch (as JSON: lists, not tuples), so the batch is normalized with these
        options = orjson.loads(orjson.dumps(normalize_options(entry.options)))
    except ValueError as exc:
        os.close(fd)
        raise PauseSource(f"source {entry.key!r}: {exc} (registry {registry.path})") from None
    owner = catalog.catalog().formats()[entry.export_format or ""].export_owner
    if owner and "account_id" not in options:
        if account := resolve(owner)(entry):  # the export's owner (an X archive's: its tweets' author)
            options["account_id"] = account
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        stored = lake.raw_batches(entry.tenant, entry.platform, entry.key)  # manifests read once, for both checks
        if ingested and file_fingerprint(fh.fileno()) == ingested:
            newest = stored[-1].manifest if stored else None
            if newest and newest.extra.get("normalize", {}) == options and newest.extra.get("file_size") == size:
                return ExportIngest(None, f"unchanged since the last sync (same size, times and inode): already "
                                    f"stored, newest batch {newest.batch_id}", {"file": shown(entry.identifier)})
        # new options: stored again, re-read; only batches stored with these options can hold this content
        candidates = [previous for previous in stored if previous.manifest.extra.get("normalize", {}) == options]
        sha = _sha256(fh) if candidates else None  # nothing to compare with (a first sync): read once, not twice
        for previous in candidates:
            if sha in (previous.manifest.sha256, previous.manifest.extra.get("source_sha256")):  # erasure rewrites
                return ExportIngest(None, f"unchanged: already stored as batch {previous.manifest.batch_id}",
                                    {"file": shown(entry.identifier)})
        name = entry.identifier.rsplit("/", 1)[-1]
        fh.seek(0)
        before = file_fingerprint(fh.fileno())
        batch = lake.write_raw_batch(
            tenant=entry.tenant,
            platform=entry.platform,
            source=entry.key,
            batch_id=new_batch_id(run_id, 0),
            fmt=entry.export_format or "",
            method="export",
            run_id=run_id,
            stream=fh,
            extra={"file_name": name, "file_size": os.fstat(fh.fileno()).st_size,
                   **({"normalize": options} if options else {})},
        )
        moved = file_fingerprint(fh.fileno()) != before
    if moved or (sha is not None and batch.manifest.sha256 != sha):
        raise ExportChanged(f"export file {shown(entry.identifier)} changed while it was being read; it will be read "
                            "again")
    return ExportIngest(batch, "stored", {"file": shown(entry.identifier), "bytes": batch.manifest.bytes})


def collect_export(entry: SourceEntry, registry: Registry, lake: Lake, run_id: str | None,
                   ingested: str = "") -> Collected:
    """One sync of an export-file source (``ingest_export_file``), with what it stored counted in records;
    ``metadata["result"]`` says what happened."""
    ingest = ingest_export_file(entry, registry, lake, run_id, ingested)
    counts = export_record_stats(lake, ingest.batch) if ingest.batch else nothing_stored()
    return Collected([ingest.batch] if ingest.batch else [], {"result": ingest.reason, **counts, **ingest.metadata})
