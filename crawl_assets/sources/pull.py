"""What every pull-based REST sync shares: its budget, its page buffer, its result, and the Dagster glue.

A sync engine (``<platform>/sync.py``) is a plain function
``sync(client, entry, state, store, budget) -> SyncResult``; it hands pages to a :class:`PageBuffer`,
which calls ``store(lines, state, info)`` every few pages with the state that covers them. The
collector (:func:`collect_with`) makes ``store`` write a raw batch and *then* save the checkpoint, and
sorts the engine's errors into Dagster's vocabulary (pause the source, retry after a wait, or raise).
"""

from __future__ import annotations

import copy
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import dagster as dg

from crawl_assets.checkpoints import Checkpointer
from crawl_assets.lake import Lake, RawBatch
from crawl_assets.lake.layout import new_batch_id
from crawl_assets.registry import SourceEntry
from crawl_assets.sources.common import fail_permanently, raw_materialization
from crawl_assets.sdk.errors import PermanentError, RateLimitWait
from crawl_assets.sdk.http import ClientStats
from crawl_assets.sources.tenant_secrets import MissingCredential

class SourceConfigError(ValueError):
    """The registry entry asks for something this source cannot do (wrong kind, a too slow cadence):
    the run fails at once, without retries, with the message."""


StoreBatch = Callable[[list[bytes], dict[str, Any], dict[str, Any]], None]
"""``store(lines, state, info)``: make ``lines`` durable (none: nothing to write), then save ``state``."""


@dataclass
class Budget:
    """How much one run may do; a stopped run resumes from its checkpoint next time."""

    max_requests: int | None = None
    deadline: float | None = None  # epoch seconds; no request starts after it

    def allows(self, stats: ClientStats, clock: Callable[[], float] = time.time) -> bool:
        if self.max_requests is not None and sum(stats.requests.values()) >= self.max_requests:
            return False
        return self.deadline is None or clock() < self.deadline


@dataclass
class SyncStats:
    """What a sync saw; ``extra`` holds source-specific counts (all end up in the run's metadata)."""

    fetched: int = 0
    new: int = 0
    updated: int = 0
    deleted: int = 0
    pages: int = 0
    batches: int = 0
    complete: bool = False
    newest_event_at: str | None = None  # ISO instant of the newest item stored
    extra: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def saw(self, instant: datetime | None) -> None:
        if instant is not None:
            iso = instant.astimezone(timezone.utc).isoformat()
            if self.newest_event_at is None or iso > self.newest_event_at:
                self.newest_event_at = iso


@dataclass
class SyncResult:
    state: dict[str, Any]
    stats: SyncStats


class PageBuffer:
    """Pages waiting to be stored with the state that covers them (flushed every ``pages_per_batch``)."""

    def __init__(self, store: StoreBatch, stats: SyncStats, pages_per_batch: int = 5):
        self.store, self.stats, self.pages_per_batch = store, stats, max(1, pages_per_batch)
        self.preamble: list[bytes] = []  # context lines every batch starts with (e.g. Discourse categories)
        self.lines: list[bytes] = []
        self.pages = 0
        self.info: dict[str, Any] = {}

    def add(self, line: bytes, state: dict[str, Any], *, page: bool = True, **info: Any) -> None:
        self.lines.append(line)
        self.info.update(info)
        if page:
            self.pages += 1
            self.stats.pages += 1
        if self.pages >= self.pages_per_batch:
            self.flush(state)

    def flush(self, state: dict[str, Any]) -> None:
        """Store what is buffered (even nothing: the state alone may have moved) with a copy of ``state``."""
        if self.lines:
            self.stats.batches += 1
        self.store(self.preamble + self.lines if self.lines else [], copy.deepcopy(state), dict(self.info))
        self.lines, self.pages, self.info = [], 0, {}


def require_kind(entry: SourceEntry, kind: str, platform_label: str) -> None:
    """Refuse a registry entry of a kind this sync engine does not collect live."""
    if entry.kind.value != kind:
        raise SourceConfigError(f"source {entry.key}: {platform_label} sources are of kind {kind!r} (or export_file)")


def begin(state: dict[str, Any], store: StoreBatch, pages_per_batch: int) -> tuple[dict[str, Any], SyncStats, PageBuffer]:
    """A sync's working copy of the checkpoint, its stats and its page buffer."""
    stats = SyncStats()
    return copy.deepcopy(state), stats, PageBuffer(store, stats, pages_per_batch)


def lake_store(context: dg.AssetExecutionContext, entry: SourceEntry, lake: Lake, fmt: str,
               checkpointer: Checkpointer) -> tuple[StoreBatch, list[RawBatch]]:
    """A ``store`` that writes each batch to the raw lake and only then saves the checkpoint (so a crash
    between the two re-fetches a batch instead of skipping it), and the list of batches it wrote."""
    batches: list[RawBatch] = []
    seq = itertools.count()

    def store(lines: list[bytes], state: dict[str, Any], info: dict[str, Any]) -> None:
        if lines:
            batches.append(lake.write_raw_batch(
                tenant=entry.tenant, platform=entry.platform, source=entry.key,
                batch_id=new_batch_id(context.run.run_id, next(seq)), fmt=fmt, method="api",
                run_id=context.run.run_id, lines=lines, extra=info,
            ))
        checkpointer.save(state)

    return store, batches


SyncFn = Callable[[Any, SourceEntry, dict[str, Any], StoreBatch, Budget], SyncResult]


def collect_with(context: dg.AssetExecutionContext, entry: SourceEntry, lake: Lake, *, resource: Any,
                 sync: SyncFn, fmt: str) -> dg.MaterializeResult:
    """Run ``sync`` for one source inside a raw asset step; the checkpoint moves only past stored pages.

    ``resource`` is the platform's ``RestSourceResource``: ``client(entry)`` builds the client (a
    ``MissingCredential`` or ``ValueError`` pauses the source with the reason, naming the variable),
    ``budget()`` bounds the run, ``rate_limit_retries`` bounds the waits for a rate-limit window.
    """
    started = time.time()
    checkpointer = Checkpointer(context)
    store, batches = lake_store(context, entry, lake, fmt, checkpointer)
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
