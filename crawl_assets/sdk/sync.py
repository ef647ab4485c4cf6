"""What every sync engine shares, whatever its API: the run's budget, the buffer that hands pages to
``store`` with the state that covers them, the result, and the raw-batch writer behind ``store``.

A sync engine (``sources/<platform>/sync.py``) is a plain function that walks its API and calls
``store(lines, state, info)`` (a :data:`StoreBatch`) every few pages; :class:`RawBatchWriter` makes that
write a raw batch to the lake and *then* save the checkpoint, so a run killed anywhere resumes from the
last stored page, never past it. Nothing here imports Dagster: the checkpoint is saved through a
:class:`Checkpointer`, which the orchestration implements.

A live collector (:data:`LiveCollector`) runs one sync of one source: ``collect(resource, entry, env)`` with
the platform's resource and a :class:`CollectEnv`; it returns what it stored (:class:`Collected`), or raises
``PauseSource`` / ``RetryLater`` (``crawl_assets.sdk.errors``) for the orchestration to act on.

The shared live collector of the pull-based syncs (the orchestration runs it): the engine of a pull-based
sync is ``sync(client, entry, state, store, budget) -> SyncResult``. :func:`run_engine` makes ``store`` write a raw batch and
*then* save the checkpoint (``RawBatchWriter``), and sorts the engine's errors into what the orchestration acts
on (``PauseSource``: pause the source; ``RetryLater``: retry after the wait; anything else: its retry policy).
The REST sources run through :func:`collect_with`; X builds its client and budget itself and runs the same
:func:`run_engine` (``sources/x/collect.py``).
"""

from __future__ import annotations

import copy
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Generic, Protocol, TypeVar

from crawl_assets.core.catalog import SourceSpec, resolve
from crawl_assets.lake import Lake, RawBatch
from crawl_assets.lake.layout import new_batch_id
from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.errors import (BadRequest, MissingCredential, PauseSource, PermanentError, RateLimitWait,
                                     RetryLater, SourceConfigError)
from crawl_assets.sdk.http import ClientStats


class Checkpointer(Protocol):
    """A source's sync state between and within runs; ``save`` persists at once (call it only after the data
    the state covers is in the lake); ``saves`` counts the saves of this run."""

    saves: int

    def load(self) -> dict[str, Any]: ...

    def save(self, state: dict[str, Any], **metadata: Any) -> None: ...


class Log(Protocol):
    def info(self, msg: str) -> None: ...

    def warning(self, msg: str) -> None: ...


@dataclass(frozen=True)
class CollectEnv:
    """What a live collector gets of the run it runs in."""

    lake: Lake
    run_id: str | None
    checkpointer: Checkpointer
    log: Log


@dataclass(frozen=True)
class Collected:
    """What one sync stored (raw batches, in order) and reports (plain metadata values; a dict is JSON)."""

    batches: list[RawBatch]
    metadata: dict[str, Any]


LiveCollector = Callable[[Any, SourceEntry, CollectEnv], Collected]
"""``collect(resource, entry, env) -> Collected``: one sync of one source with the platform's resource."""

StoreBatch = Callable[[list[bytes], dict[str, Any], dict[str, Any]], None]
"""``store(lines, state, info)``: make ``lines`` durable (none: nothing to write), then save ``state``."""

S = TypeVar("S")


@dataclass
class SyncStats:
    """What a sync saw; ``extra`` holds source-specific counts (all end up in the run's metadata).

    The stats of the REST engines; X and Telegram count their walks in their own (``SyncResult.stats``)."""

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

    def record_counts(self) -> dict[str, int]:
        """The record counts every raw materialization reports."""
        return {"records_fetched": self.fetched, "records_new": self.new, "records_updated": self.updated,
                "records_deleted": self.deleted}

    def saw(self, instant: datetime | None) -> None:
        if instant is not None:
            iso = instant.astimezone(timezone.utc).isoformat()
            if self.newest_event_at is None or iso > self.newest_event_at:
                self.newest_event_at = iso


@dataclass
class Budget:
    """How much one run may do; a stopped run resumes from its checkpoint next time."""

    max_requests: int | None = None  # requests the client made
    max_pages: int | None = None  # pages the engine fetched
    deadline: float | None = None  # epoch seconds; no request starts after it

    def allows(self, client: ClientStats | None = None, clock: Callable[[], float] = time.time, *, pages: int = 0) -> bool:
        if self.max_requests is not None and client is not None and sum(client.requests.values()) >= self.max_requests:
            return False
        if self.max_pages is not None and pages >= self.max_pages:
            return False
        return self.deadline is None or clock() < self.deadline


@dataclass
class SyncResult(Generic[S]):
    state: dict[str, Any]
    stats: S


class PageBuffer:
    """Lines waiting to be stored with the state that covers them, flushed every ``pages_per_batch`` pages.

    ``stats`` (any object with ``pages`` and ``batches``) counts the pages added and the batches stored; a
    line added with ``page=False`` (context, a deletion marker) neither counts nor triggers a flush.
    ``preamble`` lines (e.g. Discourse categories) start every batch. A failing ``store`` marks the buffer
    ``broken`` so nobody tries it again on the way out.
    """

    def __init__(self, store: StoreBatch, stats: Any, pages_per_batch: int = 5):
        self.store, self.stats, self.pages_per_batch = store, stats, max(1, pages_per_batch)
        self.preamble: list[bytes] = []
        self.lines: list[bytes] = []
        self.pages = 0
        self.info: dict[str, Any] = {}
        self.broken = False

    def add(self, line: bytes, state: dict[str, Any], *, page: bool = True, **info: Any) -> None:
        self.lines.append(line)
        self.info.update(info)
        if page:
            self.pages += 1
            self.stats.pages += 1
        if self.pages >= self.pages_per_batch:
            self.flush(state)

    def flush(self, state: dict[str, Any], *, only_lines: bool = False) -> None:
        """Store what is buffered with a copy of ``state`` (with nothing buffered: the state alone, unless
        ``only_lines``)."""
        if only_lines and not self.lines:
            return
        try:
            self.store(self.preamble + self.lines if self.lines else [], copy.deepcopy(state), dict(self.info))
        except BaseException:
            self.broken = True
            raise
        if self.lines:
            self.stats.batches += 1
        self.lines, self.pages, self.info = [], 0, {}


def lag_seconds(newest_event_at: str | None, now: datetime | None = None) -> float | None:
    """Age of the newest event a sync saw (an ISO time with offset), in seconds to 0.1; ``None`` without one."""
    if not newest_event_at:
        return None
    return round(((now or datetime.now(timezone.utc)) - datetime.fromisoformat(newest_event_at)).total_seconds(), 1)


def begin(state: dict[str, Any], store: StoreBatch, pages_per_batch: int) -> tuple[dict[str, Any], SyncStats, PageBuffer]:
    """A sync's working copy of the checkpoint, its stats and its page buffer."""
    stats = SyncStats()
    return copy.deepcopy(state), stats, PageBuffer(store, stats, pages_per_batch)


@dataclass
class RawBatchWriter:
    """Raw batches of one source in the lake, numbered in the order written, and the checkpoint after them."""

    lake: Lake
    entry: SourceEntry
    run_id: str | None
    fmt: str
    save_state: Callable[[dict[str, Any]], None]
    method: str = "api"
    batches: list[RawBatch] = field(default_factory=list)
    _seq: itertools.count[int] = field(default_factory=itertools.count, init=False, repr=False)

    def write(self, lines: list[bytes], extra: dict[str, Any]) -> RawBatch:
        batch = self.lake.write_raw_batch(
            tenant=self.entry.tenant, platform=self.entry.platform, source=self.entry.key,
            batch_id=new_batch_id(self.run_id, next(self._seq)), fmt=self.fmt, method=self.method,
            run_id=self.run_id, lines=lines, extra=extra,
        )
        self.batches.append(batch)
        return batch

    def store(self, lines: list[bytes], state: dict[str, Any], info: dict[str, Any]) -> None:
        """The :data:`StoreBatch` of the source: its lines as a batch (when there are any), then ``state``."""
        if lines:
            self.write(lines, info)
        self.save_state(state)


def require_kind(entry: SourceEntry, kind: str, platform_label: str) -> None:
    """Refuse a registry entry of a kind this sync engine does not collect live."""
    if entry.kind.value != kind:
        raise SourceConfigError(f"source {entry.key}: {platform_label} sources are of kind {kind!r} (or export_file)")


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
