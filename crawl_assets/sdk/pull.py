"""The shared live collector of the pull-based syncs, plain Python (the orchestration runs it).

A sync engine (``<platform>/sync.py``) is a plain function ``sync(client, entry, state, store, budget) ->
SyncResult`` on the kit of ``crawl_assets.sdk.sync``. :func:`run_engine` makes ``store`` write a raw batch and
*then* save the checkpoint (``RawBatchWriter``), and sorts the engine's errors into what the orchestration acts
on (``PauseSource``: pause the source; ``RetryLater``: retry after the wait; anything else: its retry policy).
The REST sources run through :func:`collect_with`; X builds its client and budget itself and runs the same
:func:`run_engine` (``sources/x/collect.py``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, TypeVar

from crawl_assets.core.spec import SourceSpec, resolve
from crawl_assets.lake import RawBatch
from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.errors import (BadRequest, MissingCredential, PauseSource, PermanentError, RateLimitWait, RetryLater,
                                     SourceConfigError)
from crawl_assets.sdk.http import ClientStats
from crawl_assets.sdk.sync import (Budget, CollectEnv, Collected, LiveCollector, RawBatchWriter, StoreBatch, SyncResult,
                                   SyncStats, lag_seconds)

SyncFn = Callable[[Any, SourceEntry, dict[str, Any], StoreBatch, Budget], SyncResult]
T = TypeVar("T")


def live_collector(spec: SourceSpec) -> LiveCollector | None:
    """The collector of a spec's live kinds: its own (``live``), the shared pull collector (``pull``), or none."""
    if spec.live:
        return resolve(spec.live)
    if spec.pull is None:
        return None
    sync, fmt, platform = resolve(spec.pull.sync), spec.pull.raw_format, spec.platform

    def collect(resource: Any, entry: SourceEntry, env: CollectEnv) -> Collected:
        return collect_with(resource, entry, env, sync=sync, fmt=fmt)

    collect.__doc__ = f"Sync one {platform} source into the lake; the checkpoint moves only past stored batches."
    return collect


def opened(build: Callable[[], T]) -> T:
    """``build()`` (a client, options); a configuration error (a bad option, a missing credential: the message
    names the variable) pauses the source, as a revoked token does."""
    try:
        return build()
    except (ValueError, MissingCredential) as err:
        raise PauseSource(str(err)) from None


def run_engine(entry: SourceEntry, env: CollectEnv, fmt: str, sync: Callable[[dict[str, Any], StoreBatch], SyncResult],
               *, rate_limit_retries: int, refused: str | None = None) -> tuple[SyncResult, list[RawBatch]]:
    """``sync(state, store)`` from the saved checkpoint, storing raw batches of ``fmt``; the checkpoint moves
    only past stored pages. ``PermanentError`` and ``SourceConfigError`` pause the source (``BadRequest`` too,
    its reason after ``refused``, when given); ``RateLimitWait`` retries after the wait, at most
    ``rate_limit_retries`` times."""
    writer = RawBatchWriter(env.lake, entry, env.run_id, fmt, env.checkpointer.save)
    try:
        result = sync(env.checkpointer.load(), writer.store)
    except (SourceConfigError, PermanentError) as err:
        raise PauseSource(str(err)) from None
    except BadRequest as err:
        if refused is None:
            raise
        raise PauseSource(f"{refused}{err}") from None  # built from the registry entry: retrying cannot help
    except RateLimitWait as err:
        env.log.warning(f"{entry.key}: {err}; {len(writer.batches)} batches stored, retrying after the wait")
        raise RetryLater(str(err), seconds=math.ceil(err.seconds), max_retries=rate_limit_retries) from err
    return result, writer.batches


def collect_with(resource: Any, entry: SourceEntry, env: CollectEnv, *, sync: SyncFn, fmt: str) -> Collected:
    """Run ``sync`` for one source with a client of ``resource``, the platform's ``RestSourceResource``:
    ``client(entry)`` builds it, ``budget()`` bounds the run, ``rate_limit_retries`` bounds the waits for a
    rate-limit window."""
    started = time.time()
    client = opened(lambda: resource.client(entry))
    try:
        result, batches = run_engine(
            entry, env, fmt, lambda state, store: sync(client, entry, state, store, resource.budget()),
            rate_limit_retries=resource.rate_limit_retries)
    finally:
        client.http.close()
    for warning in result.stats.warnings:
        env.log.warning(f"{entry.key}: {warning}")
    meta = sync_metadata(result.stats, client.stats, started)
    meta["checkpoints_saved"] = env.checkpointer.saves
    env.log.info(f"{entry.key}: {result.stats.fetched} fetched in {len(batches)} batches, "
                 f"{meta['requests']} requests, complete={result.stats.complete}")
    return Collected(batches, meta)


def sync_metadata(stats: SyncStats, client: ClientStats, started: float) -> dict[str, Any]:
    """The raw asset's per-sync metadata: volume, requests, waits, lag, and whether it caught up."""
    meta: dict[str, Any] = {
        **stats.record_counts(),
        "pages": stats.pages,
        "complete": stats.complete,
        **client.as_metadata(),
        "duration_seconds": round(time.time() - started, 3),
        "newest_event_at": stats.newest_event_at or "",
        **stats.extra,
    }
    if stats.newest_event_at:
        meta["newest_event_lag_seconds"] = lag_seconds(stats.newest_event_at)
    return meta
