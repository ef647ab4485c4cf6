"""Per-item bulk faults for the test proxy: take chosen items out of a ``_bulk`` body, then put their
error answers back into the node's response at their original positions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

WITH_SOURCE = ("index", "create", "update")


def split_bulk(body: bytes, rule_for: Callable[[str], Any]) -> tuple[bytes, list[tuple[int, dict[str, Any], Any]]]:
    """(the body without the rejected items, [(position, {op: action}, rule)]) for one NDJSON bulk body."""
    lines = body.split(b"\n")
    kept: list[bytes] = []
    rejected: list[tuple[int, dict[str, Any], Any]] = []
    i = position = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        action = orjson.loads(line)
        [(op, meta)] = action.items()
        width = 2 if op in WITH_SOURCE else 1
        rule = rule_for(str(meta.get("_id")))
        if rule is None:
            kept += lines[i:i + width]
        else:
            rejected.append((position, action, rule))
        i += width
        position += 1
    return (b"\n".join(kept) + b"\n") if kept else b"", rejected


def merge_bulk_response(answer: bytes, rejected: list[tuple[int, dict[str, Any], Any]]) -> bytes:
    """The node's response with an error item for each rejected action, in request order."""
    resp = orjson.loads(answer)
    forwarded = iter(resp.get("items") or [])
    by_position = {pos: (action, rule) for pos, action, rule in rejected}
    total = len(resp.get("items") or []) + len(rejected)
    items = []
    for pos in range(total):
        if pos not in by_position:
            items.append(next(forwarded))
            continue
        action, rule = by_position[pos]
        [(op, meta)] = action.items()
        items.append({op: {"_index": meta.get("_index"), "_id": meta.get("_id"), "status": rule.status,
                           "error": {"type": rule.type, "reason": rule.reason}}})
    resp["items"] = items
    resp["errors"] = True
    return orjson.dumps(resp)
