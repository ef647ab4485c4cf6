"""What happened to the documents given to a bulk sink (``crawl_assets.index.sink``), for materializations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# the counters two runs' stats add up (``SinkStats.merge``)
_SUMMED = ("docs", "created", "updated", "noop", "failed", "retried", "request_retries", "bytes", "bulk_requests",
           "producer_waits")


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
        for name in _SUMMED:
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
