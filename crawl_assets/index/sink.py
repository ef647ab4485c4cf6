"""The bulk sink: idempotent, order-safe, back-pressured indexing with every document accounted for.

Shape (after elastic/connectors' sink, plus what it lacks):

* the producer (the caller's thread) routes each document to its month index, computes ``_id`` and the
  external version, and formats the action line (from a pre-serialized per-index head) and the orjson
  source line into one ``bytes``, which it appends to the open batch;
* a batch closes at ``batch_docs`` documents or ``batch_bytes`` bytes and goes into a bounded queue of
  ``queue_batches`` batches; when the queue is full the producer **blocks**, so memory stays bounded
  whatever the cluster's speed: about ``(queue_batches + 2 * concurrency + 1) * batch_bytes`` (queued and
  in-flight batches, the request body of each in-flight batch, the open batch);
* ``concurrency`` worker threads send batches with ``client.bulk`` (the official client is the transport);
* each item is accounted: created, updated, noop (409 version conflict: an older observation lost),
  failed (dead-lettered with the reason). Per-item 429 / ``es_rejected_execution_exception`` are re-sent
  with exponential backoff and full jitter, up to ``max_item_retries`` rounds; writes refused by an index
  write block (a reindex switching generations) are re-sent likewise for up to ``write_block_wait_s``
  seconds, however many rounds that takes (how long a clone holds the block depends on the cluster's load,
  not on the backoff tuning); whole-request failures (connection drops, timeouts, 429, 5xx) are retried
  likewise. A document given up on is dead-lettered with the last refusal the cluster gave for it.
  Re-sending is always safe: writes are idempotent under ``external_gte``.

Why not ``helpers.streaming_bulk``: it serializes every action through the client's serializer one by one
(measured ~85k docs/s with orjson vs ~134k for hand-built NDJSON + ``client.bulk``, shared/notes/benchmarks)
and sends one chunk at a time; here the NDJSON is built once in the producer and several requests are in
flight, with our own per-item accounting and dead letters.

Deletions are not special: a record with ``deleted: true`` is indexed like any other (a tombstone) and,
carrying the newest edit time, wins over older snapshots.
"""

from __future__ import annotations

import hashlib
import logging
import queue
import random
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

import orjson
from elastic_transport import ConnectionError as TransportConnectionError
from elastic_transport import ConnectionTimeout, TransportError
from elasticsearch import ApiError, Elasticsearch

from crawl_assets.index import bootstrap
from crawl_assets.index.deadletter import DeadLetterWriter
from crawl_assets.index.naming import MONTHLY, RoutingError, check_family, check_tenant, index_name, month_of
from crawl_assets.index.versioning import observation_version

log = logging.getLogger(__name__)

MiB = 1024 * 1024
RETRY_REQUEST_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
BULK_FILTER_PATH = "errors,items.*.status,items.*.result,items.*.error.type,items.*.error.reason"
_ID_MAX_BYTES = 512
_ACTION_END = b',"version_type":"external_gte"}}\n'


@dataclass
class SinkStats:
    """What happened to the documents given to a sink; ``as_metadata()`` for Dagster materializations."""

    docs: int = 0
    created: int = 0
    updated: int = 0
    noop: int = 0
    failed: int = 0
    retried: int = 0
    request_retries: int = 0
    bytes: int = 0
    bulk_requests: int = 0
    producer_waits: int = 0
    peak_buffered_bytes: int = 0
    deadletter_path: str | None = None
    indices: list[str] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list, repr=False)

    @property
    def accounted(self) -> int:
        return self.created + self.updated + self.noop + self.failed

    @property
    def unaccounted(self) -> int:
        """Documents given to the sink with no outcome: 0 after a normal ``close()``."""
        return self.docs - self.accounted

    def _percentile(self, q: float) -> float:
        if not self.latencies_ms:
            return 0.0
        ordered = sorted(self.latencies_ms)
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    @property
    def latency_p50_ms(self) -> float:
        return self._percentile(0.50)

    @property
    def latency_p95_ms(self) -> float:
        return self._percentile(0.95)

    def merge(self, other: "SinkStats") -> "SinkStats":
        """Sum of two runs (e.g. records then edges), for one materialization's metadata."""
        out = SinkStats()
        for name in ("docs", "created", "updated", "noop", "failed", "retried", "request_retries", "bytes",
                     "bulk_requests", "producer_waits"):
            setattr(out, name, getattr(self, name) + getattr(other, name))
        out.peak_buffered_bytes = max(self.peak_buffered_bytes, other.peak_buffered_bytes)
        out.deadletter_path = self.deadletter_path or other.deadletter_path
        out.indices = sorted(set(self.indices) | set(other.indices))
        out.latencies_ms = self.latencies_ms + other.latencies_ms
        return out

    def as_metadata(self) -> dict[str, Any]:
        """Plain JSON-able values (Dagster turns them into metadata entries)."""
        return {
            "docs": self.docs, "created": self.created, "updated": self.updated, "noop": self.noop,
            "failed": self.failed, "unaccounted": self.unaccounted, "retried": self.retried,
            "request_retries": self.request_retries, "bytes": self.bytes, "bulk_requests": self.bulk_requests,
            "latency_p50_ms": self.latency_p50_ms, "latency_p95_ms": self.latency_p95_ms,
            "producer_waits": self.producer_waits, "deadletter_path": self.deadletter_path or "",
            "indices": ", ".join(self.indices),
        }


class SinkAborted(RuntimeError):
    """Too many documents failed; the documents already given are all accounted for."""


def edge_id(doc: Mapping[str, Any]) -> str:
    """Deterministic ``_id`` of an edge from its type, src and dst (bounded length whatever the keys)."""
    kind, src, dst = doc.get("type"), doc.get("src"), doc.get("dst")
    if not kind or src is None or dst is None:
        raise RoutingError("an edge needs type, src and dst")
    digest = hashlib.blake2b(f"{src}\x1f{dst}".encode(), digest_size=16).hexdigest()
    return f"{kind}:{digest}"


def document_id(doc: Mapping[str, Any], family: str) -> str:
    """``_id``: the record ``key``; an edge's deterministic id; an author's key (or platform:author_id)."""
    if family == "edges":
        return edge_id(doc)
    key = doc.get("key")
    if type(key) is str and 0 < len(key) <= _ID_MAX_BYTES // 4:  # the common case: short enough in any encoding
        return key
    if not key and family == "authors" and doc.get("platform") and doc.get("author_id"):
        key = f"{doc['platform']}:{doc['author_id']}"
    if not key or not isinstance(key, str):
        raise RoutingError("field 'key' is missing or not a string")
    if len(key.encode()) > _ID_MAX_BYTES:
        raise RoutingError(f"field 'key' is longer than {_ID_MAX_BYTES} bytes")
    return key


def _json_default(value: Any) -> Any:
    """Values orjson does not know but that have one obvious JSON form (pandas/numpy scalars, Decimal)."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return value.item()
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(f"cannot serialize a {type(value).__name__} value")


def _backoff(attempt: int, base: float, cap: float) -> float:
    """Exponential backoff with full jitter (AWS style): uniform in [0, min(cap, base * 2**attempt)]."""
    return random.uniform(0, min(cap, base * (2 ** attempt)))


# One prepared document is one ``bytes``: its action line then its source line, each ending in "\n", so a
# bulk body is the plain join of a batch's lines. Bytes are atoms (the garbage collector never tracks them;
# a dataclass per document once made the collector ~30% of the client's CPU time), and one object per
# document is the least the producer can allocate. What a dead letter needs (``_id``, index, version,
# source) is read back from the line by ``_unpack``, which only a failed document pays for.


@dataclass
class _Batch:
    lines: list[bytes]  # in order: joined, they are the first request body
    size: int  # bytes in ``lines``


def _unpack(line: bytes) -> tuple[str, str, int, bytes]:
    """``(doc_id, index, version, source)`` of a prepared line (a JSON action line never holds a raw newline)."""
    cut = line.index(b"\n")
    action = orjson.loads(line[:cut])["index"]
    return action["_id"], action["_index"], action["version"], line[cut + 1:-1]


class BulkSink:
    """Index documents of one family and tenant; use as a context manager or call ``close()``."""

    def __init__(
        self,
        client: Elasticsearch,
        *,
        family: Literal["records", "edges", "authors"],
        tenant: str,
        deadletter_root: str,
        run_id: str | None = None,
        batch_docs: int = 500,
        batch_bytes: int = 3 * MiB,
        concurrency: int = 4,
        queue_batches: int = 4,
        max_item_retries: int = 8,
        max_request_retries: int = 8,
        backoff_base_s: float = 0.25,
        backoff_max_s: float = 30.0,
        request_timeout_s: float = 120.0,
        ensure_indices: bool = True,
        refresh: bool = True,
        max_failures: int | None = None,
        write_block_wait_s: float = 600.0,
    ) -> None:
        self.family = check_family(family)
        self.tenant = check_tenant(tenant)
        if batch_docs < 1 or batch_bytes < 1 or concurrency < 1 or queue_batches < 1:
            raise ValueError("batch_docs, batch_bytes, concurrency and queue_batches must be positive")
        self.batch_docs, self.batch_bytes = batch_docs, batch_bytes
        self.max_item_retries, self.max_request_retries = max_item_retries, max_request_retries
        self.backoff_base_s, self.backoff_max_s = backoff_base_s, backoff_max_s
        # How long a document refused only by an index write block keeps being re-sent (a reindex holds the
        # block while it clones the index and moves its name; a crashed reindex leaves it until re-run).
        self.write_block_wait_s = write_block_wait_s
        self.ensure_indices, self.refresh = ensure_indices, refresh
        # Stop taking documents once this many failed (e.g. a broken mapping refusing everything), instead
        # of dead-lettering a whole backfill; None means never stop.
        self.max_failures = max_failures
        self.client = client
        # The sink owns retries (with accounting and backoff); the client must not retry underneath.
        self._bulk_client = client.options(max_retries=0, request_timeout=request_timeout_s)
        # Refusals name the field, not the whole document (servers from 8.18 on; older ones refuse the
        # parameter itself, and the sink then sends without it).
        self._bulk_params: dict[str, Any] = {"include_source_on_error": False}
        self.deadletters = DeadLetterWriter(deadletter_root, family, tenant, run_id)
        self.stats = SinkStats()
        self._lock = threading.Lock()
        self._queue: queue.Queue[_Batch | None] = queue.Queue(maxsize=queue_batches)
        self._open: list[bytes] = []  # the open batch's lines
        self._open_size = 0
        self._buffered = 0
        self._known_indices: set[str] = set()
        self._routes: dict[Any, bytes] = {}  # month route -> head of its action lines
        self._monthly = self.family in MONTHLY
        self._default_version = 0 if self.family == "edges" else None
        self._template_checked = False
        self._closed = False
        self._fatal: Exception | None = None
        self._workers = [threading.Thread(target=self._work, name=f"es-bulk-{i}", daemon=True)
                         for i in range(concurrency)]
        for worker in self._workers:
            worker.start()

    # ---- producer side ------------------------------------------------------------------------------
    def add(self, doc: Mapping[str, Any]) -> None:
        """Queue one document; blocks while the queue is full (backpressure)."""
        if self._closed or self._fatal is not None or self.max_failures is not None:
            self._check_accepting()
        try:
            line = self._prepare(doc)
        except (RoutingError, TypeError, ValueError) as exc:
            self.stats.docs += 1
            self._dead_letter_doc(doc, None, None, None, "invalid_document", str(exc))
            return
        # (A cluster error while creating a month index propagates: the document was not taken.)
        self.stats.docs += 1
        if line is None:
            return
        size = len(line)
        if self._open and self._open_size + size > self.batch_bytes:
            self._close_batch()
        self._open.append(line)
        self._open_size += size
        if len(self._open) >= self.batch_docs or self._open_size >= self.batch_bytes:
            self._close_batch()

    def add_many(self, docs: Iterable[Mapping[str, Any]]) -> None:
        add = self.add
        for doc in docs:
            add(doc)

    def _check_accepting(self) -> None:
        """Raise when the sink must not take another document (closed, broken dead letters, too many failures)."""
        if self._closed:
            raise RuntimeError("sink is closed")
        if self._fatal is not None:
            raise RuntimeError(f"the sink cannot record failures any more: {self._fatal}") from self._fatal
        if self.max_failures is not None and self.stats.failed > self.max_failures:
            raise SinkAborted(f"{self.stats.failed} documents failed (more than max_failures={self.max_failures}); "
                              f"see the dead letters in {self.deadletters.full_path}")

    def _prepare(self, doc: Mapping[str, Any]) -> bytes | None:
        """The document's action and source lines as one ``bytes``; None when it was dead-lettered here."""
        tenant = doc.get("tenant")
        if tenant is not None and tenant != self.tenant:
            self._dead_letter_doc(doc, None, None, None, "tenant_mismatch",
                                  f"document tenant {tenant!r} written through the sink of tenant {self.tenant!r}")
            return None
        doc_id = document_id(doc, self.family)
        route: Any = None
        if self._monthly:
            created_at = doc.get("created_at")
            if not created_at:
                if self.family == "records":
                    raise RoutingError("field 'created_at' is missing")
            elif type(created_at) is str and created_at[-1:] == "Z" and created_at[4:5] == "-":
                route = created_at[:7]  # "YYYY-MM" of a UTC instant: the month, without parsing it again
            else:
                route = month_of(created_at)
        head = self._routes.get(route)
        if head is None:
            month = month_of(route + "-01T00:00:00Z") if isinstance(route, str) and "-" in route else route
            head = self._routes[route] = self._action_head(index_name(self.family, self.tenant, month))
        version = observation_version(doc, default=self._default_version)
        try:
            source = orjson.dumps(doc)
        except TypeError:  # non-string keys, numpy/pandas values: slower options, so only when needed
            source = orjson.dumps(doc, default=_json_default,
                                  option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY)
        # One allocation for both lines (the orjson output is copied once, and freed at once).
        return b"%s%s,\"version\":%d%s%s\n" % (head, orjson.dumps(doc_id), version, _ACTION_END, source)

    def _action_head(self, index: str) -> bytes:
        """Ensure the index exists (once per sink) and pre-serialize the start of its action lines."""
        if index not in self._known_indices:
            self._ensure(index)
        return b'{"index":{"_index":%s,"_id":' % orjson.dumps(index)

    def _ensure(self, index: str) -> None:
        if self.ensure_indices:
            if not self._template_checked:
                bootstrap.ensure_template(self.client, self.family)
                self._template_checked = True
            bootstrap.ensure_index(self.client, index, self.family, self.tenant)
        self._known_indices.add(index)

    def _close_batch(self) -> None:
        if not self._open:
            return
        batch = _Batch(self._open, self._open_size)
        self._open, self._open_size = [], 0
        with self._lock:
            # Bytes held by the sink: queued and in-flight batches plus this one (the open batch is bounded
            # by batch_bytes, so the peak stays within (queue_batches + concurrency + 1) * batch_bytes).
            self._buffered += batch.size
            self.stats.peak_buffered_bytes = max(self.stats.peak_buffered_bytes, self._buffered)
        if self._queue.full():
            self.stats.producer_waits += 1
        self._queue.put(batch)

    def close(self) -> SinkStats:
        """Send what is left, wait for every batch, close the dead-letter file; returns the stats."""
        if self._closed:
            return self.stats
        self._close_batch()
        for _ in self._workers:
            self._queue.put(None)
        for worker in self._workers:
            worker.join()
        self._closed = True
        self.stats.deadletter_path = self.deadletters.close()
        self.stats.indices = sorted(self._known_indices)
        if self.refresh and self._known_indices:
            self._refresh()
        if self.stats.unaccounted:
            log.error("%d documents without an outcome", self.stats.unaccounted)
        if self._fatal is not None:
            raise RuntimeError(f"dead letters could not be written: {self._fatal}") from self._fatal
        return self.stats

    def _refresh(self) -> None:
        """Make this run's writes visible (counts checked right after a materialization must see them)."""
        try:
            self.client.indices.refresh(index=",".join(sorted(self._known_indices)), ignore_unavailable=True)
        except (ApiError, TransportError) as exc:
            log.warning("refresh after indexing failed: %s", exc)

    def __enter__(self) -> "BulkSink":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- worker side --------------------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            batch = self._queue.get()
            if batch is None:
                return
            outcome = bytearray(len(batch.lines))  # 1 once an item is counted or dead-lettered
            try:
                self._send(batch.lines, b"".join(batch.lines), outcome)
            except Exception as exc:  # noqa: BLE001 - never lose a batch to an unexpected error
                log.exception("bulk worker failed; dead-lettering the rest of the batch")
                for i, line in enumerate(batch.lines):
                    if not outcome[i]:
                        self._dead_letter_item(line, None, "sink_error", f"{type(exc).__name__}: {exc}", 1)
                        outcome[i] = 1
            finally:
                with self._lock:
                    self._buffered -= batch.size

    def _send(self, items: list[bytes], body: bytes, outcome: bytearray) -> None:
        """Send a batch; re-send its rejected items with backoff until each one has an outcome."""
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
                    self._dead_letter_item(items[i], None, "bulk_response_mismatch",
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
                    self._dead_letter_item(items[i], status, etype, f"still refused after {budget}: {reason}", sends)
                    outcome[i] = 1
            if not refused:
                return
            with self._lock:
                self.stats.retried += len(refused)
            time.sleep(_backoff(rounds, self.backoff_base_s, self.backoff_max_s))
            pending = list(refused)
            body = b"".join([items[i] for i in pending])

    def _account(self, items: list[bytes], pending: list[int], results: list[dict[str, Any]],
                 outcome: bytearray, sends: int) -> dict[int, tuple[int, str, str]]:
        """Count each item's result; dead-letter refusals; return the positions to re-send (429s, write
        blocks), each with its refusal ``(status, type, reason)``."""
        created = updated = noop = 0
        retry: dict[int, tuple[int, str, str]] = {}
        for i, result in zip(pending, results):
            res = next(iter(result.values()))
            status = res.get("status", 0)
            error = res.get("error")
            if not error and 200 <= status < 300:
                kind = res.get("result")
                if kind == "created":
                    created += 1
                elif kind == "noop":
                    noop += 1
                else:
                    updated += 1
                outcome[i] = 1
                continue
            etype = error.get("type", "") if isinstance(error, dict) else str(error)
            reason = error.get("reason", "") if isinstance(error, dict) else ""
            if status == 409 and etype == "version_conflict_engine_exception":
                noop += 1  # an older observation than the indexed one: nothing to do
                outcome[i] = 1
            elif status == 429 or etype == "es_rejected_execution_exception" or write_blocked(etype, reason):
                retry[i] = (status, etype, reason)
            else:
                self._dead_letter_item(items[i], status, etype, reason, sends)
                outcome[i] = 1
        with self._lock:
            self.stats.created += created
            self.stats.updated += updated
            self.stats.noop += noop
        return retry

    def _request(self, body: bytes, items: list[bytes], pending: list[int], outcome: bytearray,
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
            except ApiError as exc:
                status, etype, reason = exc.status_code, str(exc.error), _api_reason(exc)
                if status == 400 and params and "include_source_on_error" in reason:
                    self._bulk_params = {}  # a server before 8.18 does not know it: send without it
                    continue
                retryable = status in RETRY_REQUEST_STATUSES or write_blocked(etype, reason)
            except (TransportConnectionError, ConnectionTimeout) as exc:
                status, etype, reason, retryable = None, type(exc).__name__, str(exc), True
            except TransportError as exc:
                status, etype, reason, retryable = None, type(exc).__name__, str(exc), False
            with self._lock:
                self.stats.bytes += len(body)
            if not retryable or attempt >= self.max_request_retries:
                why = reason if not retryable else f"{reason} (after {attempt + 1} attempts)"
                for i in pending:
                    self._dead_letter_item(items[i], status, etype, why, sends + attempt + 1)
                    outcome[i] = 1
                return None, attempt + 1
            attempt += 1
            with self._lock:
                self.stats.request_retries += 1
                self.stats.retried += len(pending)
            log.info("bulk request failed (%s %s); retry %d", status, etype, attempt)
            time.sleep(_backoff(attempt, self.backoff_base_s, self.backoff_max_s))

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
        doc_id, index, version, source = _unpack(line)
        self._write_letter(doc=source, doc_id=doc_id, index=index, version=version,
                           reason={"status": status, "type": etype, "reason": reason}, attempts=attempts)
        with self._lock:
            self.stats.failed += 1

    def _dead_letter_doc(self, doc: Mapping[str, Any], doc_id: str | None, index: str | None,
                         version: int | None, etype: str, reason: str) -> None:
        try:
            payload: Any = dict(doc)
            orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS)
        except (TypeError, orjson.JSONEncodeError):
            payload = {"unserializable": repr(doc)[:10_000]}
        self._write_letter(doc=payload, doc_id=doc_id, index=index, version=version,
                           reason={"status": None, "type": etype, "reason": reason}, attempts=0)
        with self._lock:
            self.stats.failed += 1


def write_blocked(etype: str, reason: str) -> bool:
    """An index write block (``FORBIDDEN/8/index write``): set for seconds while ``es reindex`` clones
    the index and moves its name to a new generation; the write is retried like a 429 and then lands
    there. (Other blocks, e.g. a read-only index, are not retried: they need an operator.)"""
    return etype == "cluster_block_exception" and "index write" in reason


def _api_reason(exc: ApiError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("reason", ""))[:2000]
    return str(exc.message)[:2000]


def index_documents(
    client: Elasticsearch,
    docs: Iterable[Mapping[str, Any]],
    *,
    family: Literal["records", "edges", "authors"],
    tenant: str,
    deadletter_root: str,
    run_id: str | None = None,
    **tuning: Any,
) -> SinkStats:
    """Index ``docs`` (streamed, never held whole) through a :class:`BulkSink`; see it for ``tuning``."""
    sink = BulkSink(client, family=family, tenant=tenant, deadletter_root=deadletter_root, run_id=run_id, **tuning)
    try:
        sink.add_many(docs)
    finally:
        stats = sink.close()
    return stats
