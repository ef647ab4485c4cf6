"""What the cluster's answers mean to the bulk sink, as data: which per-item results count as what, which
refusals are re-sent, which whole-request failures are retried, and the backoff between rounds.

Per item: 2xx is created/updated/noop as the cluster says; 409 ``version_conflict_engine_exception`` is a
no-op (an older observation than the indexed one lost); 429, ``es_rejected_execution_exception``, an index
write block (``es reindex`` switching generations) and the refusals of a cluster failing over (a primary
shard not yet re-assigned after its node died: ``unavailable_shards_exception``; no elected master yet) are
re-sent; anything else is dead-lettered. Per request:
connection drops, timeouts, the statuses of ``RETRY_REQUEST_STATUSES`` and write blocks are retried; other
errors dead-letter the request's documents. Re-sending is always safe: writes are idempotent under
``external_gte``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Literal

from elastic_transport import ConnectionError as TransportConnectionError
from elastic_transport import ConnectionTimeout, TransportError
from elasticsearch import ApiError

RETRY_REQUEST_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
RETRY_REQUEST_ERRORS: tuple[type[Exception], ...] = (TransportConnectionError, ConnectionTimeout)
RETRY_ITEM_STATUSES = frozenset({429})
# A node's death: its primaries are unavailable until a replica is promoted (a write waits for that up to
# its timeout, then is refused with this), and without an elected master writes meet the no-master block.
RETRY_ITEM_TYPES = frozenset({"es_rejected_execution_exception", "unavailable_shards_exception"})
NOOP_REFUSALS = frozenset({(409, "version_conflict_engine_exception")})
BULK_FILTER_PATH = "errors,items.*.status,items.*.result,items.*.error.type,items.*.error.reason"

ItemOutcome = Literal["created", "updated", "noop", "retry", "failed"]


def write_blocked(etype: str, reason: str) -> bool:
    """An index write block (``FORBIDDEN/8/index write``): set for seconds while ``es reindex`` clones
    the index and moves its name to a new generation; the write is retried like a 429 and then lands
    there. (Other blocks, e.g. a read-only index, are not retried: they need an operator.)"""
    return etype == "cluster_block_exception" and "index write" in reason


def no_master(etype: str, reason: str) -> bool:
    """The cluster has no elected master (a master node died; the others are electing one): writes are
    refused for seconds (``cluster.no_master_block``), then pass."""
    return etype == "cluster_block_exception" and "no master" in reason.lower()


def item_outcome(result: Mapping[str, Any]) -> tuple[ItemOutcome, int, str, str]:
    """``(outcome, status, error type, reason)`` of one item of a bulk response."""
    status = result.get("status", 0)
    error = result.get("error")
    if not error and 200 <= status < 300:
        kind = result.get("result")
        return ("created" if kind == "created" else "noop" if kind == "noop" else "updated"), status, "", ""
    etype = error.get("type", "") if isinstance(error, dict) else str(error)
    reason = error.get("reason", "") if isinstance(error, dict) else ""
    if (status, etype) in NOOP_REFUSALS:
        return "noop", status, etype, reason
    if status in RETRY_ITEM_STATUSES or etype in RETRY_ITEM_TYPES or write_blocked(etype, reason) \
            or no_master(etype, reason):
        return "retry", status, etype, reason
    return "failed", status, etype, reason


def request_failure(exc: ApiError | TransportError) -> tuple[int | None, str, str, bool]:
    """``(status, error type, reason, retryable)`` of a failed bulk request."""
    if isinstance(exc, ApiError):
        status, etype, reason = exc.status_code, str(exc.error), api_reason(exc)
        return status, etype, reason, (status in RETRY_REQUEST_STATUSES or write_blocked(etype, reason)
                                       or no_master(etype, reason))
    return None, type(exc).__name__, str(exc), isinstance(exc, RETRY_REQUEST_ERRORS)


def api_reason(exc: ApiError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("reason", ""))[:2000]
    return str(exc.message)[:2000]


def backoff(attempt: int, base: float, cap: float) -> float:
    """Exponential backoff with full jitter (AWS style): uniform in [0, min(cap, base * 2**attempt)]."""
    return random.uniform(0, min(cap, base * (2 ** attempt)))
