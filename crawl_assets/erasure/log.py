"""The erasure log: what was erased, when and how much, without the erased data.

One JSON line per erasure in ``erasure/{tenant}/log.jsonl``. The subject (author id or source key)
is kept only as a salted SHA-256, so the log proves an erasure without identifying whom it was about.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

import orjson

from crawl_assets.lake import Lake


def log_path(tenant: str) -> str:
    return f"erasure/{tenant}/log.jsonl"


def subject_digest(subject: str) -> dict[str, str]:
    salt = secrets.token_hex(8)
    return {"salt": salt, "sha256": hashlib.sha256(f"{salt}:{subject}".encode()).hexdigest()}


def append_entry(lake: Lake, tenant: str, entry: dict[str, Any]) -> str:
    """Append one entry (rewriting the small log atomically); returns the log's location."""
    rel = log_path(tenant)
    old = b""
    if lake.exists(rel):
        with lake.fs.open(lake.path(rel), "rb") as fh:
            old = fh.read()
    lake.write_bytes(rel, old + orjson.dumps(entry) + b"\n")
    return lake.url(rel)


def read_log(lake: Lake, tenant: str) -> list[dict[str, Any]]:
    rel = log_path(tenant)
    if not lake.exists(rel):
        return []
    with lake.fs.open(lake.path(rel), "rb") as fh:
        return [orjson.loads(line) for line in fh.read().splitlines() if line.strip()]
