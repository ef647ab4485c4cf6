"""The bulk sink's in-flight side: worker threads send closed batches with ``client.bulk``, account for each
item's result, re-send refusals with backoff and dead-letter what is given up on (``refusals`` says which is
which). Every document gets exactly one outcome, whatever happens to the request or to the dead-letter storage.
"""

from __future__ import annotations

import gc
import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any

from elastic_transport import TransportError
from elasticsearch import ApiError, Elasticsearch

from crawl_assets.index.documents import unpack, without_lemmas
from crawl_assets.index.outcomes import DeadLetterWriter, SinkStats
from crawl_assets.index.refusals import BULK_FILTER_PATH, backoff, item_outcome, request_failure, write_blocked

log = logging.getLogger("crawl_assets.index.sink")


@dataclass
class BulkBody:
    """A closed batch: its documents' lines joined into the first request body (held once), and where each
    line ends in it (a re-sent or dead-lettered document is cut back out)."""

    body: bytes
    ends: list[int]

    @property
    def size(self) -> int:
        return len(self.body)

    def __len__(self) -> int:
        return len(self.ends)

    def item(self, i: int) -> bytes:
        return self.body[self.ends[i - 1] if i else 0:self.ends[i]]


# While any pool has users, the collector's first generation waits for this many new objects, not 700: a load
# allocates hundreds of thousands of short-lived acyclic objects (rows, bulk responses' items), and the
# collections they triggered (each promoting a response's live items to be traversed again) were ~20% of the
# client's CPU. Cycles made meanwhile are still collected, only less often.
GC_YOUNG_THRESHOLD = 100_000
_gc_lock = threading.Lock()
_gc_users = 0
_gc_saved: tuple[int, ...] = ()


def _gc_relax() -> None:
    global _gc_users, _gc_saved
    with _gc_lock:
        _gc_users += 1
        if _gc_users == 1:
            _gc_saved = gc.get_threshold()
            gc.set_threshold(max(_gc_saved[0], GC_YOUNG_THRESHOLD), *_gc_saved[1:])


def _gc_restore() -> None:
    global _gc_users
    with _gc_lock:
        _gc_users -= 1
        if _gc_users == 0 and gc.get_threshold()[0] == max(_gc_saved[0], GC_YOUNG_THRESHOLD):
            gc.set_threshold(*_gc_saved)  # (unless someone else set it meanwhile)


class SendPool:
    """Worker threads sending the closed batches of one or more sinks, taken from one bounded queue: a pool
    shared by a load's families keeps ``concurrency`` requests in flight whichever family has bodies ready.
    It holds at most ``(queue_batches + concurrency + 1)`` bodies (queued, in flight, one being put)."""

    def __init__(self, concurrency: int, queue_batches: int) -> None:
        if concurrency < 1 or queue_batches < 1:
            raise ValueError("concurrency and queue_batches must be positive")
        self._queue: queue.Queue[tuple[BulkSender, BulkBody] | None] = queue.Queue(maxsize=queue_batches)
        self._lock = threading.Lock()
        self.buffered = self.peak_buffered = 0  # bytes of the bodies queued or in flight
        self._users = 0
        self._workers = [threading.Thread(target=self._work, name=f"es-bulk-{i}", daemon=True)
                         for i in range(concurrency)]
        for worker in self._workers:
            worker.start()

    def attach(self) -> None:
        with self._lock:
            self._users += 1
            first = self._users == 1
        if first:
            _gc_relax()

    def submit(self, sender: BulkSender, body: BulkBody) -> bool:
        """Queue a body (blocks while the queue is full: backpressure); True when it had to wait."""
        with self._lock:
            self.buffered += body.size
            self.peak_buffered = max(self.peak_buffered, self.buffered)
        waits = self._queue.full()
        self._queue.put((sender, body))
        return waits

    def detach(self) -> None:
        """A sink is done with the pool; the last one stops the workers (what is queued is sent first)."""
        with self._lock:
            self._users -= 1
            last = self._users == 0
        if last:
            _gc_restore()
            for _ in self._workers:
                self._queue.put(None)
            for worker in self._workers:
                worker.join()

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            sender, body = item
            try:
                sender._process(body)
            finally:
                with self._lock:
                    self.buffered -= body.size


class BulkSender:
    """The worker side of ``crawl_assets.index.sink.BulkSink`` (its base class)."""

    def __init__(self, client: Elasticsearch, deadletters: DeadLetterWriter, pool: SendPool, *,
                 max_item_retries: int, max_request_retries: int, backoff_base_s: float, backoff_max_s: float,
                 request_timeout_s: float, write_block_wait_s: float) -> None:
        self.max_item_retries, self.max_request_retries = max_item_retries, max_request_retries
        self.backoff_base_s, self.backoff_max_s = backoff_base_s, backoff_max_s
        # How long a document refused only by an index write block keeps being re-sent (a reindex holds the
        # block while it clones the index and moves its name; a crashed reindex leaves it until re-run).
        self.write_block_wait_s = write_block_wait_s
        self.client = client
        # The sink owns retries (with accounting and backoff); the client must not retry underneath.
        self._bulk_client = client.options(max_retries=0, request_timeout=request_timeout_s)
        # Refusals name the field, not the whole document (servers from 8.18 on; older ones refuse the
        # parameter itself, and the sink then sends without it).
        self._bulk_params: dict[str, Any] = {"include_source_on_error": False}
        self.deadletters = deadletters
        self.stats = SinkStats()
        self._lock = threading.Lock()
        self._pool = pool
        pool.attach()
        self._outstanding = 0  # this sender's bodies queued or in flight in the pool
        self._all_sent = threading.Condition(self._lock)
        self._fatal: Exception | None = None

    def _submit(self, batch: BulkBody) -> None:
        with self._lock:
            self._outstanding += 1
        if self._pool.submit(self, batch):
            self.stats.producer_waits += 1
        with self._lock:
            self.stats.peak_buffered_bytes = max(self.stats.peak_buffered_bytes, self._pool.peak_buffered)

    def _wait_sent(self) -> None:
        """Wait until every body this sender submitted has an outcome, then leave the pool."""
        with self._all_sent:
            while self._outstanding:
                self._all_sent.wait()
        self._pool.detach()

    def _process(self, batch: BulkBody) -> None:
        """Send one body (in a pool worker) and account for each of its documents, whatever happens."""
        outcome = bytearray(len(batch))  # 1 once an item is counted or dead-lettered
        try:
            self._send(batch, outcome)
        except Exception as exc:  # noqa: BLE001 - never lose a batch to an unexpected error
            log.exception("bulk worker failed; dead-lettering the rest of the batch")
            for i in range(len(batch)):
                if not outcome[i]:
                    self._dead_letter_item(batch.item(i), None, "sink_error", f"{type(exc).__name__}: {exc}", 1)
                    outcome[i] = 1
        finally:
            with self._all_sent:
                self._outstanding -= 1
                self._all_sent.notify_all()

    def _send(self, items: BulkBody, outcome: bytearray) -> None:
        """Send a batch; re-send its rejected items with backoff until each one has an outcome."""
        body = items.body
        pending = list(range(len(items)))
        rounds = rejected_rounds = sends = 0
        blocked_since: float | None = None
        while pending:
            response, tries = self._request(body, items, pending, outcome, sends)
            sends += tries
            if response is None:
                return
            results = response.get("items") or []
            if len(results) != len(pending):
                for i in pending:
                    self._dead_letter_item(items.item(i), None, "bulk_response_mismatch",
                                           f"{len(results)} results for {len(pending)} operations", sends)
                    outcome[i] = 1
                return
            if response.get("errors") is False:  # the common case: one cheap pass
                kinds = [next(iter(r.values())).get("result") for r in results]
                created, noop = kinds.count("created"), kinds.count("noop")
                for i in pending:
                    outcome[i] = 1
                with self._lock:
                    self.stats.created += created
                    self.stats.noop += noop
                    self.stats.updated += len(pending) - created - noop
                return
            refused = self._account(items, pending, results, outcome, sends)
            if not refused:
                return
            # A 429 is retried for max_item_retries rounds; a write block for write_block_wait_s seconds, however
            # many rounds that takes (how long a reindex holds it depends on the cluster's load).
            blocked = {i for i, (_, etype, reason) in refused.items() if write_blocked(etype, reason)}
            rounds += 1
            if len(blocked) < len(refused):  # a round counts against max_item_retries only with a 429 in it
                rejected_rounds += 1
            if blocked and blocked_since is None:
                blocked_since = time.monotonic()
            waited = time.monotonic() - blocked_since if blocked_since is not None else 0.0
            for i in list(refused):
                over, budget = ((waited > self.write_block_wait_s, f"{waited:.1f} s of retries") if i in blocked
                                else (rejected_rounds > self.max_item_retries, f"{self.max_item_retries} retries"))
                if over:
                    status, etype, reason = refused.pop(i)
                    self._dead_letter_item(items.item(i), status, etype, f"still refused after {budget}: {reason}",
                                           sends)
                    outcome[i] = 1
            if not refused:
                return
            with self._lock:
                self.stats.retried += len(refused)
            time.sleep(backoff(rounds, self.backoff_base_s, self.backoff_max_s))
            pending = list(refused)
            body = b"".join([items.item(i) for i in pending])

    def _account(self, items: BulkBody, pending: list[int], results: list[dict[str, Any]],
                 outcome: bytearray, sends: int) -> dict[int, tuple[int, str, str]]:
        """Count each item's result; dead-letter refusals; return the positions to re-send (429s, write
        blocks), each with its refusal ``(status, type, reason)``."""
        counts = {"created": 0, "updated": 0, "noop": 0}
        retry: dict[int, tuple[int, str, str]] = {}
        for i, result in zip(pending, results):
            kind, status, etype, reason = item_outcome(next(iter(result.values())))
            if kind == "retry":
                retry[i] = (status, etype, reason)
                continue
            if kind == "failed":
                self._dead_letter_item(items.item(i), status, etype, reason, sends)
            else:
                counts[kind] += 1
            outcome[i] = 1
        with self._lock:
            self.stats.created += counts["created"]
            self.stats.updated += counts["updated"]
            self.stats.noop += counts["noop"]
        return retry

    def _request(self, body: bytes, items: BulkBody, pending: list[int], outcome: bytearray,
                 sends: int) -> tuple[dict[str, Any] | None, int]:
        """One bulk call with whole-request retries: (response body, attempts), or (None, attempts) when
        it failed for good and the pending items were dead-lettered."""
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                params = self._bulk_params  # (several workers may meet an old server's refusal at once)
                resp = self._bulk_client.bulk(operations=body, filter_path=BULK_FILTER_PATH, **params)
                elapsed = (time.perf_counter() - started) * 1000
                with self._lock:
                    self.stats.bulk_requests += 1
                    self.stats.bytes += len(body)
                    self.stats.latencies_ms.append(elapsed)
                return resp.body, attempt + 1
            except (ApiError, TransportError) as exc:
                status, etype, reason, retryable = request_failure(exc)
                if isinstance(exc, ApiError) and status == 400 and params and "include_source_on_error" in reason:
                    self._bulk_params = {}  # a server before 8.18 does not know it: send without it
                    continue
            with self._lock:
                self.stats.bytes += len(body)
            if not retryable or attempt >= self.max_request_retries:
                why = reason if not retryable else f"{reason} (after {attempt + 1} attempts)"
                for i in pending:
                    self._dead_letter_item(items.item(i), status, etype, why, sends + attempt + 1)
                    outcome[i] = 1
                return None, attempt + 1
            attempt += 1
            with self._lock:
                self.stats.request_retries += 1
                self.stats.retried += len(pending)
            log.info("bulk request failed (%s %s); retry %d", status, etype, attempt)
            time.sleep(backoff(attempt, self.backoff_base_s, self.backoff_max_s))

    # ---- dead letters -------------------------------------------------------------------------------
    def _write_letter(self, **letter: Any) -> None:
        """Write a dead letter; if the storage is broken, remember why (the producer then stops and
        ``close()`` raises) but keep going, so every document still gets exactly one outcome."""
        try:
            self.deadletters.write(**letter)
        except Exception as exc:  # noqa: BLE001 - any storage error
            log.error("dead letter for %s not written: %s", letter.get("doc_id"), exc)
            self._fatal = self._fatal or exc

    def _dead_letter_item(self, line: bytes, status: int | None, etype: str, reason: str, attempts: int) -> None:
        doc_id, index, version, source = unpack(line)
        self._write_letter(doc=without_lemmas(source), doc_id=doc_id, index=index, version=version,
                           reason={"status": status, "type": etype, "reason": reason}, attempts=attempts)
        with self._lock:
            self.stats.failed += 1
