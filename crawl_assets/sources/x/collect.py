"""The live collector of ``x_posts_raw``: one X source per partition, synced with a checkpoint.

Dagster glue only: load the checkpoint, run :func:`sync_source` with a store callback that writes a
raw batch (format ``x-v2``, one response page per line) and then saves the checkpoint, and turn the
engine's errors into Dagster's vocabulary (pause the source, retry after a reset, or fail).
"""

from __future__ import annotations

import math
import time
from datetime import datetime, timezone
from typing import Any

import dagster as dg

from crawl_assets.checkpoints import Checkpointer
from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sources.common import fail_permanently, raw_materialization
from crawl_assets.sdk.errors import BadRequest, PermanentError, RateLimitWait
from crawl_assets.sdk.http import ClientStats
from crawl_assets.sdk.sync import Budget, RawBatchWriter, SyncResult
from crawl_assets.sources.x.ids import id_time
from crawl_assets.sources.x.resource import MissingCredential, XResource
from crawl_assets.sources.x.plan import SyncPlan
from crawl_assets.sources.x.sync import stats_metadata, sync_source
from crawl_assets.sources.x.threads import LakeThreadMemory

RAW_FORMAT = "x-v2"


def collect(context: dg.AssetExecutionContext, entry: SourceEntry, lake: Lake) -> dg.MaterializeResult:
    """Sync one X source into the lake; the checkpoint moves only past stored pages."""
    resource: XResource = context.resources.x
    started = time.time()
    checkpointer = Checkpointer(context)
    writer = RawBatchWriter(lake, entry, context.run.run_id, RAW_FORMAT, checkpointer.save)
    store, batches = writer.store, writer.batches

    try:
        options = SyncPlan.of(entry)
        client = resource.client(entry.tenant, entry.credential)
    except (ValueError, MissingCredential) as err:  # a configuration error: pause, as for a revoked token
        raise fail_permanently(context, entry, str(err)) from None
    memory = LakeThreadMemory(lake, entry.tenant, entry.platform, entry.key) if options.complete_threads else None
    budget = Budget(max_pages=resource.max_pages_per_run, deadline=started + resource.max_run_seconds)
    client.stats = ClientStats()  # this sync's requests and waits only, even on a reused client
    try:
        result = sync_source(client, entry, checkpointer.load(), store, budget, memory=memory)
    except PermanentError as err:
        raise fail_permanently(context, entry, str(err)) from None
    except BadRequest as err:
        # built from the registry entry (query, identifier): retrying the same request cannot help
        raise fail_permanently(context, entry, f"X refused the request: {err}") from None
    except RateLimitWait as err:
        context.log.warning(f"{entry.key}: {err}; {len(batches)} batches stored, retrying after the reset")
        raise dg.RetryRequested(max_retries=resource.max_rate_limit_retries,
                                seconds_to_wait=math.ceil(err.seconds)) from err
    meta = run_metadata(result, client.stats.as_metadata(), started)
    meta["checkpoints_saved"] = checkpointer.saves
    context.log.info(f"{entry.key}: {result.stats.posts} posts in {len(batches)} batches, "
                     f"{meta['requests']} requests, complete={result.stats.complete}")
    return raw_materialization(entry, batches, meta)


def run_metadata(result: SyncResult, client_meta: dict[str, Any], started: float) -> dict[str, Any]:
    """What the raw asset reports per sync: volume, requests, waits, lag and whether it caught up."""
    stats = result.stats
    newest = result.state.get("newest_id")
    meta: dict[str, Any] = {
        "records_fetched": stats.posts + stats.parents_found,
        "records_new": stats.posts,
        "records_updated": 0,
        "records_deleted": 0,
        **client_meta,
        **stats_metadata(stats),
        "duration_seconds": round(time.time() - started, 3),
        "newest_id": newest or "",
    }
    meta.pop("requests_by_endpoint", None)
    if newest:
        meta["newest_post_at"] = id_time(newest).isoformat()
        meta["cursor_lag_seconds"] = round((datetime.now(timezone.utc) - id_time(newest)).total_seconds(), 1)
    return meta
