"""Hypothesis strategies that break valid inputs the ways real inputs break: fields of the wrong type,
missing or extra fields, huge values, deep nesting, truncation, stray bytes."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

WRONG_TYPES: tuple[Any, ...] = (
    None, True, False, 0, -1, 2**64, -(2**63) - 1, 1.5, float("1e308"), "", "x", "2024-13-45T99:99:99Z",
    "سلام\u200c#تگ", "\ud800", [], [None], [1, "a", {}], {}, {"_": "Unknown"}, {"id": {"id": []}},
)  # fmt: skip


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (dict keys and list indices) inside a JSON value, the root included."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, (*prefix, i))
    return out


def _set(root: Any, path: tuple[Any, ...], new: Any, *, delete: bool = False) -> Any:
    if not path:
        return new
    parent = root
    for part in path[:-1]:
        parent = parent[part]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return root


scalars = st.sampled_from(WRONG_TYPES) | st.text(max_size=30) | st.integers() | st.floats(allow_nan=True)
json_values = st.recursive(
    scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3), max_leaves=8
)


@st.composite
def mutated(draw: st.DrawFn, seed: Any, max_ops: int = 3, max_huge: int = 100_000) -> Any:
    """``seed`` with up to ``max_ops`` edits: a value replaced by a wrong type or a huge or deep value,
    a field deleted, an unknown field added."""
    value = copy.deepcopy(seed)
    for _ in range(draw(st.integers(1, max_ops))):
        all_paths = paths(value)
        path = all_paths[draw(st.integers(0, len(all_paths) - 1))]
        op = draw(st.sampled_from(["wrong_type", "wrong_type", "arbitrary", "delete", "huge", "deep", "add"]))
        if op == "delete" and path:
            value = _set(value, path, None, delete=True)
        elif op == "huge":
            n = draw(st.integers(10_000, max_huge))
            value = _set(value, path, draw(st.sampled_from(["ا" * n, "😀" * (n // 4), None])) or list(range(n // 10)))
        elif op == "deep":
            depth = draw(st.integers(50, 800))  # deeper: tests/test_payload_edges.py, as bytes
            deep: Any = "leaf"
            for _ in range(depth):
                deep = [deep]
            value = _set(value, path, deep)
        elif op == "add" and isinstance(value, dict):
            value[draw(st.text(max_size=10))] = copy.deepcopy(draw(json_values))
        elif op == "arbitrary":
            value = _set(value, path, copy.deepcopy(draw(json_values)))
        else:
            value = _set(value, path, copy.deepcopy(draw(st.sampled_from(WRONG_TYPES))))
    return value


@st.composite
def damaged_bytes(draw: st.DrawFn, payload: bytes) -> bytes:
    """A payload truncated, with bytes flipped or junk inserted (invalid UTF-8, NUL, BOM, CR)."""
    data = bytearray(payload)
    op = draw(st.sampled_from(["truncate", "flip", "insert", "bom"]))
    if op == "truncate" and data:
        return bytes(data[: draw(st.integers(0, len(data) - 1))])
    if op == "flip" and data:
        for _ in range(draw(st.integers(1, 5))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(data)
    if op == "bom":
        return b"\xef\xbb\xbf" + bytes(data)
    junk = draw(st.sampled_from([b"\x00", b"\xff\xfe", b"\xc3", b"\r", b"\n\n", b"}", b"{\"", b"\xed\xa0\x80"]))
    at = draw(st.integers(0, len(data)))
    return bytes(data[:at]) + junk + bytes(data[at:])
