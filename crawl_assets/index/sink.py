"""The bulk sink: idempotent, order-safe, back-pressured indexing with every document accounted for.

Shape (after elastic/connectors' sink, plus what it lacks):

* the producer (the caller's thread) routes each document to its month index, computes ``_id`` and the
  external version, and formats the action line (from a pre-serialized per-index head) and the orjson
  source line into one ``bytes``, which it appends to the open batch;
* a batch closes at ``batch_bytes`` bytes (or ``batch_docs`` documents), its lines joined into one request
  body, and goes into a bounded queue of ``queue_batches`` batches; when the queue is full the producer
  **blocks**, so memory stays bounded whatever the cluster's speed: about ``(queue_batches + concurrency +
  2) * batch_bytes`` (queued and in-flight bodies, the open batch and its body while it is joined). Bodies
  are sized in bytes, not documents: a node indexes a few large requests faster than many small ones, and
  an edge document is a fifth of a record's size;
* ``concurrency`` worker threads send batches with ``client.bulk`` (the official client is the transport);
  sinks of several families may share one ``SendPool`` (its queue and workers), so the cluster gets the same
  number of requests whichever family has bodies ready, and ``close_together`` ends them with one refresh;
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

This module is the producer side; the in-flight side is ``bulk_send`` (the sink's base class), what each
answer means is ``refusals`` (data), the lines themselves ``documents``, the figures and dead letters ``outcomes``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from bisect import bisect_right
from itertools import accumulate
from typing import Any, Literal

import orjson
from elastic_transport import TransportError
from elasticsearch import ApiError, Elasticsearch

from crawl_assets.index import indices
from crawl_assets.index.bulk_send import BulkBody, BulkSender, SendPool
from crawl_assets.index.documents import (Encoded, action_head, document_id, edge_id, fast_lines, prepared_line,
                                         source_bytes, with_lemmas)
from crawl_assets.index.naming import (MONTHLY, RoutingError, check_family, check_tenant, index_name, month_of,
                                      observation_version)
from crawl_assets.index.outcomes import DeadLetterWriter, SinkStats
from crawl_assets.index.refusals import write_blocked

__all__ = ["BulkSink", "MiB", "SendPool", "SinkAborted", "SinkStats", "document_id", "edge_id", "index_documents",
           "write_blocked"]

log = logging.getLogger(__name__)

MiB = 1024 * 1024


class SinkAborted(RuntimeError):
    """Too many documents failed; the documents already given are all accounted for."""


class BulkSink(BulkSender):
    """Index documents of one family and tenant; use as a context manager or call ``close()``."""

    def __init__(
        self,
        client: Elasticsearch,
        *,
        family: Literal["records", "edges", "authors"],
        tenant: str,
        deadletter_root: str,
        run_id: str | None = None,
        batch_docs: int = 50_000,
        batch_bytes: int = 4 * MiB,
        concurrency: int = 3,
        queue_batches: int = 2,
        max_item_retries: int = 8,
        max_request_retries: int = 8,
        backoff_base_s: float = 0.25,
        backoff_max_s: float = 30.0,
        request_timeout_s: float = 120.0,
        ensure_indices: bool = True,
        refresh: bool = True,
        max_failures: int | None = None,
        write_block_wait_s: float = 600.0,
        relax_refresh: bool = False,
        pool: SendPool | None = None,
    ) -> None:
        self.family = check_family(family)
        self.tenant = check_tenant(tenant)
        if batch_docs < 1 or batch_bytes < 1 or concurrency < 1 or queue_batches < 1:
            raise ValueError("batch_docs, batch_bytes, concurrency and queue_batches must be positive")
        # Its own workers (``concurrency``, ``queue_batches``) unless given a pool shared with other sinks.
        super().__init__(client, DeadLetterWriter(deadletter_root, family, tenant, run_id),
                         pool or SendPool(concurrency, queue_batches), max_item_retries=max_item_retries,
                         max_request_retries=max_request_retries, backoff_base_s=backoff_base_s,
                         backoff_max_s=backoff_max_s, request_timeout_s=request_timeout_s,
                         write_block_wait_s=write_block_wait_s)
        self.batch_docs, self.batch_bytes = batch_docs, batch_bytes
        self.ensure_indices, self.refresh = ensure_indices, refresh
        # A large load: each index's refresh is off while the sink writes to it, and back to the template's
        # interval at close (a crash leaves it off: ``indices.restore_refresh`` at the next step's start).
        self.relax_refresh = relax_refresh
        self._relaxed: list[str] = []
        # Stop taking documents once this many failed (e.g. a broken mapping refusing everything), instead
        # of dead-lettering a whole backfill; None means never stop.
        self.max_failures = max_failures
        self._open: list[bytes] = []  # the open batch's lines
        self._open_size = 0
        self._known_indices: set[str] = set()
        self._routes: dict[Any, bytes] = {}  # month route -> head of its action lines
        self._monthly = self.family in MONTHLY
        self._default_version = 0 if self.family == "edges" else None
        self._template_checked = False
        self._finished = self._closed = False

    # ---- producer side ------------------------------------------------------------------------------
    def add(self, doc: Mapping[str, Any], version: int | None = None) -> None:
        """Queue one document (with ``version`` when given, else its observation's); blocks while the queue is
        full (backpressure)."""
        if self._finished or self._fatal is not None or self.max_failures is not None:
            self._check_accepting()
        try:
            line = self._prepare(doc, version)
        except (RoutingError, TypeError, ValueError) as exc:
            self.stats.docs += 1
            self._dead_letter_doc(doc, None, None, None, "invalid_document", str(exc))
            return
        # (A cluster error while creating a month index propagates: the document was not taken.)
        self.stats.docs += 1
        if line is not None:
            self._append(line)

    def add_encoded(self, encoded: Encoded) -> None:
        """Queue a batch built by ``documents.record_documents`` or ``edge_documents``: its fast rows as they are, the others through ``add``."""
        if self._finished or self._fatal is not None or self.max_failures is not None:
            self._check_accepting()
        lines = fast_lines(encoded, self._routes, self._head_of)
        self.stats.docs += len(lines)
        self._append_lines(lines)
        for doc in encoded.slow:
            self.add(doc)

    def _append(self, line: bytes) -> None:
        """``_append_lines`` for one line (the per-document path: no list, sums or search)."""
        size = len(line)
        if self._open and self._open_size + size > self.batch_bytes:
            self._close_batch()
        self._open.append(line)
        self._open_size += size
        if len(self._open) >= self.batch_docs or self._open_size >= self.batch_bytes:
            self._close_batch()

    def _append_lines(self, lines: list[bytes]) -> None:
        """Add lines to the open batch, closing it at ``batch_bytes`` (a line never split from its batch: one
        larger than that goes alone) or ``batch_docs``; the cut points found over the lines' summed sizes."""
        ends = list(accumulate(map(len, lines)))
        start, n = 0, len(lines)
        while start < n:
            base = ends[start - 1] if start else 0
            fit = bisect_right(ends, base + self.batch_bytes - self._open_size, start) - start
            take = min(max(fit, 0 if self._open else 1), self.batch_docs - len(self._open))
            if take:
                self._open.extend(lines[start:start + take])
                self._open_size += ends[start + take - 1] - base
                start += take
            if start < n or len(self._open) >= self.batch_docs or self._open_size >= self.batch_bytes:
                self._close_batch()

    def add_many(self, docs: Iterable[Mapping[str, Any]]) -> None:
        add = self.add
        for doc in docs:
            add(doc)

    def _check_accepting(self) -> None:
        """Raise when the sink must not take another document (closed, broken dead letters, too many failures)."""
        if self._finished:
            raise RuntimeError("sink is closed")
        if self._fatal is not None:
            raise RuntimeError(f"the sink cannot record failures any more: {self._fatal}") from self._fatal
        if self.max_failures is not None and self.stats.failed > self.max_failures:
            raise SinkAborted(f"{self.stats.failed} documents failed (more than max_failures={self.max_failures}); "
                              f"see the dead letters in {self.deadletters.full_path}")

    def _prepare(self, doc: Mapping[str, Any], version: int | None = None) -> bytes | None:
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
        head = self._routes.get(route) or self._head_of(route)
        if version is None:
            version = observation_version(doc, default=self._default_version)
        if self.family == "records":
            doc = with_lemmas(doc)
        return prepared_line(head, doc_id, version, source_bytes(doc))

    def _head_of(self, route: Any) -> bytes:
        """The action-line head of a route (``YYYY-MM``, a month, or None: undated), its index ensured once."""
        month = month_of(route + "-01T00:00:00Z") if isinstance(route, str) and "-" in route else route
        head = self._routes[route] = self._action_head(index_name(self.family, self.tenant, month))
        return head

    def _action_head(self, index: str) -> bytes:
        """Ensure the index exists (once per sink) and pre-serialize the start of its action lines."""
        if index not in self._known_indices:
            self._ensure(index)
        return action_head(index)

    def _ensure(self, index: str) -> None:
        relaxed = False  # a relaxed load's new index is created with refresh off (one request, not two)
        if self.ensure_indices:
            if not self._template_checked:
                indices.ensure_template(self.client, self.family)
                self._template_checked = True
            relaxed = indices.ensure_index(self.client, index, self.family, self.tenant,
                                           {"index": {"refresh_interval": "-1"}} if self.relax_refresh else None)
        if self.relax_refresh:
            if not relaxed:
                indices.set_refresh(self.client, [index], "-1")
            self._relaxed.append(index)
        self._known_indices.add(index)

    def _close_batch(self) -> None:
        if not self._open:
            return
        batch = BulkBody(b"".join(self._open), list(accumulate(map(len, self._open))))
        self._open, self._open_size = [], 0
        # Bytes held: the pool's queued and in-flight bodies plus this one (the open batch is bounded by
        # batch_bytes, so the peak stays within (queue_batches + concurrency + 2) * batch_bytes).
        self._submit(batch)

    def finish(self) -> None:
        """Send the open batch and take no more documents; the workers go on with what is queued."""
        if self._finished:
            return
        self._finished = True
        self._close_batch()

    def close(self) -> SinkStats:
        """Send what is left, wait for every batch, close the dead-letter file; returns the stats."""
        close_together([self])
        return self.stats

    def _drain(self) -> None:
        """After ``finish``: wait for this sink's bodies, close the dead letters, name the indices written."""
        self._wait_sent()
        self._closed = True
        self.stats.deadletter_path = self.deadletters.close()
        self.stats.indices = sorted(self._known_indices)

    def _settled(self) -> None:
        if self.stats.unaccounted:
            log.error("%d documents without an outcome", self.stats.unaccounted)
        if self._fatal is not None:
            raise RuntimeError(f"dead letters could not be written: {self._fatal}") from self._fatal

    def __enter__(self) -> "BulkSink":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- dead letters of documents refused before sending -------------------------------------------
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


def close_together(sinks: Iterable[BulkSink]) -> None:
    """Close several sinks as one: every open batch is sent before any sink is waited for (a family's last
    body does not wait behind another's drain), then the relaxed indices get their refresh back and the
    written ones are refreshed, one request each."""
    sinks = [s for s in sinks if not s._closed]
    try:
        for sink in sinks:
            sink.finish()
    finally:
        for sink in sinks:
            sink._drain()
    if not sinks:
        return
    client = sinks[0].client
    for interval, relaxed in _relaxed_by_interval(sinks).items():
        try:
            indices.set_refresh(client, relaxed, interval)
        except (ApiError, TransportError) as exc:
            log.warning("refresh of %s not turned back on (the next index step does): %s", relaxed, exc)
    written = sorted({i for s in sinks if s.refresh for i in s._known_indices})
    if written:  # counts checked right after a materialization must see this run's writes
        try:
            client.indices.refresh(index=",".join(written), ignore_unavailable=True)
        except (ApiError, TransportError) as exc:
            log.warning("refresh after indexing failed: %s", exc)
    for sink in sinks:
        sink._settled()


def _relaxed_by_interval(sinks: list[BulkSink]) -> dict[str | None, list[str]]:
    out: dict[str | None, list[str]] = {}
    for sink in sinks:
        if sink._relaxed:
            out.setdefault(indices.template_refresh(sink.family), []).extend(sink._relaxed)
    return out
