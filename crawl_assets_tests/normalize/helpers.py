"""Small helpers shared by the normalization tests (no fakes: real payload bytes through real normalizers)."""

from __future__ import annotations

import io
from datetime import datetime, timezone
from pathlib import Path

from crawl_assets.normalize import NormalizeContext, normalize_documents, normalize_stream
from crawl_assets.schema import Record, Rejection

SAMPLES = Path(__file__).resolve().parents[2] / "crawl_assets" / "sample_data"
CONTEXT = NormalizeContext(
    tenant="acme", source="unit", collected_at=datetime(2024, 6, 1, tzinfo=timezone.utc), method="api",
    run_id="run-1", raw_pointer="lake/raw/batch-1.jsonl.gz",
)  # fmt: skip


def run(fmt: str, payload: bytes, context: NormalizeContext = CONTEXT) -> tuple[list[Record], list[Rejection]]:
    """(records, rejections) of one payload."""
    items = list(normalize_stream(fmt, io.BytesIO(payload), name="input.jsonl", context=context))
    records = [i for i in items if isinstance(i, Record)]
    rejections = [i for i in items if isinstance(i, Rejection)]
    assert len(records) + len(rejections) == len(items)
    return records, rejections


def documents(fmt: str, payload: bytes, context: NormalizeContext = CONTEXT) -> list:
    """The unvalidated (document) path's items of one payload."""
    return list(normalize_documents(fmt, io.BytesIO(payload), name="input.jsonl", context=context))


def lines(*objects: bytes | str) -> bytes:
    """JSON lines from already-serialized objects."""
    return b"\n".join(o.encode() if isinstance(o, str) else o for o in objects) + b"\n"
