"""What became of the documents given to a bulk sink (``crawl_assets.index.sink``): the counts, for
materializations (``SinkStats``), and the dead letters of those the cluster refused for good.

Dead-letter files are kept in the lake with the reason, replayable. Layout under the lake root (a folder or
any fsspec URL)::

    deadletter/es/{family}/{tenant}/{UTC stamp}-{run id}-{random}.jsonl     pending
    deadletter/es-replayed/{family}/{tenant}/{same name}                   replayed (kept for audit)

One JSON object per line: ``failed_at``, ``run_id``, ``family``, ``tenant``, ``index``, ``id``, ``version``,
``attempts``, ``reason`` (``status``, ``type``, ``reason`` as the cluster or the sink gave them) and ``doc``
(the document exactly as it was to be indexed), so a replay after a fix re-sends the same bytes.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import orjson

from crawl_assets.lake import Lake
from crawl_assets.lake.layout import DEADLETTER_PENDING, DEADLETTER_REPLAYED, deadletter_dir

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


# Dead letters


class DeadLetterWriter:
    """Appends dead letters for one family/tenant/run to one file, opened on the first letter (thread-safe)."""

    def __init__(self, root: str, family: str, tenant: str, run_id: str | None = None) -> None:
        self._lake = Lake(root)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        run = "".join(c if c.isalnum() or c in "-_" else "_" for c in (run_id or "adhoc"))[:64]
        name = f"{stamp}-{run}-{secrets.token_hex(4)}.jsonl"
        self._relative = f"{deadletter_dir(DEADLETTER_PENDING, family, tenant)}/{name}"
        self.path = self._lake.path(self._relative)
        self.family, self.tenant, self.run_id = family, tenant, run_id
        self.count = 0
        self._file: Any = None
        self._lock = threading.Lock()

    def write(self, *, doc: Mapping[str, Any] | bytes | None, doc_id: str | None, index: str | None,
              version: int | None, reason: Mapping[str, Any], attempts: int = 1) -> None:
        """One dead letter; ``doc`` as a dict or as its already-serialized JSON bytes."""
        body = orjson.Fragment(doc) if isinstance(doc, bytes) else doc
        line = orjson.dumps({
            "failed_at": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
            "run_id": self.run_id, "family": self.family, "tenant": self.tenant, "index": index, "id": doc_id,
            "version": version, "attempts": attempts, "reason": dict(reason), "doc": body,
        }, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY) + b"\n"
        with self._lock:
            if self._file is None:
                self._file = self._lake.open_write(self._relative)
            self._file.write(line)
            self.count += 1

    def flush(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.flush()

    def close(self) -> str | None:
        """Close the file; its path when anything was written, else None."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
        return self.full_path if self.count else None

    @property
    def full_path(self) -> str:
        return self._lake.location(self._relative)


@dataclass
class DeadLetter:
    """One line of a dead-letter file."""

    path: str
    line: int
    family: str
    tenant: str
    doc: dict[str, Any]
    reason: dict[str, Any]
    id: str | None = None
    version: int | None = None  # the external version it was sent with (None: refused before it had one)


@dataclass
class BadLine:
    path: str
    line: int
    error: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.error}"


@dataclass
class DeadLetterFile:
    path: str
    family: str
    tenant: str
    letters: list[DeadLetter] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)


def pending_files(root: str, family: str | None = None, tenant: str | None = None) -> list[str]:
    """Pending dead-letter files, oldest first (names start with a UTC stamp)."""
    lake = Lake(root)
    return [lake.path(rel) for rel in lake.deadletter_files(tenant, family)]


def read_file(root: str, path: str) -> DeadLetterFile:
    """Parse a dead-letter file; malformed lines are reported with their line number, never skipped silently."""
    lake = Lake(root)
    rel = lake.relative(path)
    pieces = rel.split("/")
    family, tenant = (pieces[-3], pieces[-2]) if len(pieces) >= 3 else ("", "")
    path = lake.path(rel)
    out = DeadLetterFile(path, family, tenant)
    with lake.open_read(rel) as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                obj = orjson.loads(raw)
                doc = obj["doc"]
                if not isinstance(doc, dict):
                    raise ValueError("field 'doc' is not an object")
                version = obj.get("version")
                out.letters.append(DeadLetter(path, number, obj.get("family") or family, obj.get("tenant") or tenant,
                                              doc, obj.get("reason") or {}, obj.get("id"),
                                              version if type(version) is int else None))
            except (orjson.JSONDecodeError, KeyError, ValueError, TypeError) as exc:
                out.bad.append(BadLine(path, number, f"unreadable dead letter: {exc}"))
    return out


def iter_letters(root: str, family: str | None = None, tenant: str | None = None) -> Iterator[DeadLetter]:
    for path in pending_files(root, family, tenant):
        yield from read_file(root, path).letters


def mark_replayed(root: str, path: str) -> str:
    """Move a fully replayed file out of the pending folder (kept for audit); returns the new path."""
    lake = Lake(root)
    rel = lake.relative(path)
    if not rel.startswith(DEADLETTER_PENDING + "/"):
        return lake.path(rel)  # replayed from elsewhere (a kept replayed file): it stays where it is
    target = f"{DEADLETTER_REPLAYED}/{rel[len(DEADLETTER_PENDING) + 1:]}"
    lake.move(rel, target)
    return lake.path(target)
