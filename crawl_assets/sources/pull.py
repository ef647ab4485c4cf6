"""The Dagster glue of the pull-based REST syncs.

A sync engine (``<platform>/sync.py``) is a plain function
``sync(client, entry, state, store, budget) -> SyncResult`` on the kit of ``crawl_assets.sdk.sync``. The
collector (:func:`collect_with`) makes ``store`` write a raw batch and *then* save the checkpoint
(``RawBatchWriter``), and sorts the engine's errors into Dagster's vocabulary (pause the source, retry
after a wait, or raise).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import dagster as dg

from crawl_assets.checkpoints import Checkpointer
from crawl_assets.core.spec import SourceSpec, resolve
from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.errors import PermanentError, RateLimitWait, SourceConfigError
from crawl_assets.sdk.http import ClientStats
from crawl_assets.sdk.sync import Budget, RawBatchWriter, StoreBatch, SyncResult, SyncStats
from crawl_assets.sources.common import LiveCollector, fail_permanently, raw_materialization
from crawl_assets.sources.tenant_secrets import MissingCredential

SyncFn = Callable[[Any, SourceEntry, dict[str, Any], StoreBatch, Budget], SyncResult]


def live_collector(spec: SourceSpec) -> LiveCollector | None:
    """The collector of a spec's live kinds: its own (``live``), the shared pull collector (``pull``), or none."""
    if spec.live:
        return resolve(spec.live)
    if spec.pull is None:
        return None
    sync, fmt, platform = resolve(spec.pull.sync), spec.pull.raw_format, spec.platform

    def collect(context: dg.AssetExecutionContext, entry: SourceEntry, lake: Lake) -> dg.MaterializeResult:
        return collect_with(context, entry, lake, resource=getattr(context.resources, platform), sync=sync, fmt=fmt)

    collect.__doc__ = f"Sync one {platform} source into the lake; the checkpoint moves only past stored batches."
    return collect


def collect_with(context: dg.AssetExecutionContext, entry: SourceEntry, lake: Lake, *, resource: Any,
                 sync: SyncFn, fmt: str) -> dg.MaterializeResult:
    """Run ``sync`` for one source inside a raw asset step; the checkpoint moves only past stored pages.

    ``resource`` is the platform's ``RestSourceResource``: ``client(entry)`` builds the client (a
    ``MissingCredential`` or ``ValueError`` pauses the source with the reason, naming the variable),
    ``budget()`` bounds the run, ``rate_limit_retries`` bounds the waits for a rate-limit window.
    """
    started = time.time()
    checkpointer = Checkpointer(context)
    writer = RawBatchWriter(lake, entry, context.run.run_id, fmt, checkpointer.save)
    store, batches = writer.store, writer.batches
    try:
        client = resource.client(entry)
    except (ValueError, MissingCredential) as err:  # a configuration error: pause, as for a revoked token
        raise fail_permanently(context, entry, str(err)) from None
    try:
        result = sync(client, entry, checkpointer.load(), store, resource.budget())
    except (SourceConfigError, PermanentError) as err:
        raise fail_permanently(context, entry, str(err)) from None
    except RateLimitWait as err:
        context.log.warning(f"{entry.key}: {err}; {len(batches)} batches stored, retrying after the wait")
        raise dg.RetryRequested(max_retries=resource.rate_limit_retries, seconds_to_wait=math.ceil(err.seconds)) from err
    finally:
        client.http.close()
    for warning in result.stats.warnings:
        context.log.warning(f"{entry.key}: {warning}")
    meta = sync_metadata(result.stats, client.stats, started)
    meta["checkpoints_saved"] = checkpointer.saves
    context.log.info(f"{entry.key}: {result.stats.fetched} fetched in {len(batches)} batches, "
                     f"{meta['requests']} requests, complete={result.stats.complete}")
    return raw_materialization(entry, batches, meta)


def sync_metadata(stats: SyncStats, client: ClientStats, started: float) -> dict[str, Any]:
    """The raw asset's per-sync metadata: volume, requests, waits, lag, and whether it caught up."""
    meta: dict[str, Any] = {
        "records_fetched": stats.fetched,
        "records_new": stats.new,
        "records_updated": stats.updated,
        "records_deleted": stats.deleted,
        "pages": stats.pages,
        "complete": stats.complete,
        **client.as_metadata(),
        "duration_seconds": round(time.time() - started, 3),
        "newest_event_at": stats.newest_event_at or "",
        **stats.extra,
    }
    meta["requests_by_endpoint"] = dg.MetadataValue.json(meta["requests_by_endpoint"])
    if stats.newest_event_at:
        lag = datetime.now(timezone.utc) - datetime.fromisoformat(stats.newest_event_at)
        meta["newest_event_lag_seconds"] = round(lag.total_seconds(), 1)
    return meta
