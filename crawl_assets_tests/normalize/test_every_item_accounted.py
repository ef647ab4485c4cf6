"""An item of an unknown or older shape yields a record or a counted rejection, never neither (issue 29 item 1).

Every installed format is fed its seed items (``crawl_assets_tests/fuzz/seeds.py``: every format has them)
with one field at a time renamed to a name no normalizer reads, or one unknown field added. Either the item is
refused (a new error rejection, naming why), or the number of records and rejections falls at most by the list
elements the change hid (items under a field the normalizer does not know cannot be seen as items; anything
else it held must still be accounted for).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest

from crawl_assets.core import catalog
from crawl_assets.normalize import NormalizeContext, normalize_stream
from crawl_assets.schema import Record, Rejection
from crawl_assets_tests.fuzz.seeds import FormatSeeds, seeds

OPTIONS = NormalizeContext(tenant="t", source="shapes", timezone="UTC")
KEEP = 2  # list elements kept of every list in a seed item: the shape stays, the cost stays small
UNKNOWN = {"legacy_field": {"type": "unknown", "id": "1", "items": [{"body": "x"}]}}
# Where a changed field may make something vanish by design: not items but context of the page.
CONTEXT = {"x-v2": ("errors.",)}  # an X error that does not name a requested post (normalize_unavailable)


def _shrunk(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shrunk(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shrunk(v) for v in value[:KEEP]]
    return value


def _elements(value: Any) -> int:
    """List elements in ``value``, at any depth: the most items hiding it can hide."""
    if isinstance(value, dict):
        return sum(_elements(v) for v in value.values())
    if isinstance(value, list):
        return len(value) + sum(_elements(v) for v in value)
    return 0


def _variants(value: Any) -> Iterator[tuple[str, Any, int]]:
    """(what changed, the changed value, list elements hidden) for every field renamed and every object extended."""
    if isinstance(value, dict):
        yield "+legacy_field", {**value, **UNKNOWN}, 0
        for key, child in value.items():
            renamed = {(f"legacy_{k}" if k == key else k): v for k, v in value.items()}
            yield f"{key}->legacy_{key}", renamed, _elements(child)
            for path, changed, hidden in _variants(child):
                yield f"{key}.{path}", {**value, key: changed}, hidden
    elif isinstance(value, list) and value:  # the first element stands for the others (same shape)
        for path, changed, hidden in _variants(value[0]):
            yield f"[0].{path}", [changed, *value[1:]], hidden


def _outcomes(fmt: str, payload: bytes) -> tuple[int, int]:
    """(records and rejections, error rejections) of one payload."""
    items = list(normalize_stream(fmt, io.BytesIO(payload), name="shape", context=OPTIONS))
    assert all(isinstance(i, Record | Rejection) for i in items)
    return len(items), sum(isinstance(i, Rejection) and i.error for i in items)


def _cases() -> list[tuple[str, int]]:
    found = []
    for name, spec in sorted(seeds().items()):
        shapes: dict[str, int] = {}
        for index, item in enumerate(spec.items):
            shapes.setdefault(repr(_signature(_shrunk(item))), index)  # one item per distinct shape
        found += [(name, index) for index in shapes.values()]
    return found


def _signature(value: Any) -> Any:
    if isinstance(value, dict):
        return sorted((k, _signature(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_signature(v) for v in value]
    return type(value).__name__


def test_every_format_is_fed_items_of_unknown_shapes():
    assert {seeds()[name].fmt for name, _ in _cases()} == set(catalog.catalog().formats())


@pytest.mark.parametrize(("name", "index"), _cases())
def test_items_of_unknown_shape_give_a_record_or_a_rejection(name, index):
    spec: FormatSeeds = seeds()[name]
    item = _shrunk(spec.items[index])
    before, refused = _outcomes(spec.fmt, spec.encode([item]))
    vanished = []
    for path, changed, hidden in _variants(item):
        if path.startswith(CONTEXT.get(spec.fmt, ())):
            continue
        after, errors = _outcomes(spec.fmt, spec.encode([changed]))
        if after < before - hidden and errors <= refused:
            vanished.append(f"{path}: {before} -> {after}")
    assert not vanished, f"{name}: items vanished without a record or a rejection when a field changed: {vanished[:10]}"
