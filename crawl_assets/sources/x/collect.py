"""The live collector of ``x_posts_raw``: one X source per sync, run by the shared engine path
(``crawl_assets.sdk.sync.run_engine``: raw batches of format ``x-v2``, one response page per line, then
the checkpoint). What is X's own: the client is the resource's (reused for the run), the budget counts pages
and time, threads are completed from the lake, a refused request pauses the source, and the metadata.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.http import ClientStats
from crawl_assets.sdk.sync import Budget, CollectEnv, Collected, SyncResult, opened, run_engine
from crawl_assets.sdk.id_lists import ID_LIST
from crawl_assets.sources.x.hydrate import collect_ids
from crawl_assets.sources.x.ids import id_time
from crawl_assets.sources.x.plan import SyncPlan
from crawl_assets.sources.x.sync import stats_metadata, sync_source
from crawl_assets.sources.x.threads import LakeThreadMemory

if TYPE_CHECKING:
    from crawl_assets.sources.x.resource import XResource

RAW_FORMAT = "x-v2"


def collect(resource: XResource, entry: SourceEntry, env: CollectEnv) -> Collected:
    """Sync one X source into the lake; the checkpoint moves only past stored pages."""
    if entry.kind.value == ID_LIST:
        return collect_ids(resource, entry, env)
    started = time.time()
    options, client = opened(lambda: (SyncPlan.of(entry), resource.client(entry.tenant, entry.credential)))
    memory = LakeThreadMemory(env.lake, entry.tenant, entry.platform, entry.key) if options.complete_threads else None
    budget = Budget(max_pages=resource.max_pages_per_run, deadline=started + resource.max_run_seconds)
    client.stats = ClientStats()  # this sync's requests and waits only, even on a reused client
    result, batches = run_engine(
        entry, env, RAW_FORMAT, lambda state, store: sync_source(client, entry, state, store, budget, memory=memory),
        rate_limit_retries=resource.max_rate_limit_retries, refused="X refused the request: ")
    meta = run_metadata(result, client.stats.as_metadata(), started)
    meta["checkpoints_saved"] = env.checkpointer.saves
    env.log.info(f"{entry.key}: {result.stats.posts} posts in {len(batches)} batches, "
                 f"{meta['requests']} requests, complete={result.stats.complete}")
    return Collected(batches, meta)


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
