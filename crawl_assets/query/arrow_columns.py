"""Arrow columns built from Python values through their buffers, for the Parquet export.

Why not ``pa.array``: the first Python-to-Arrow conversion of a process initializes Arrow's conversion and
compute machinery, ~45 MiB of RSS (30 MiB of it private) that stays for the life of the served API. Building
the columns from their buffers (offsets, bytes, validity bitmaps: the Arrow columnar format) never starts
it, and what Parquet writing needs is a fraction of it (measured in-process: +4 MiB against +45 MiB).
Each builder takes one page of values (``None`` is null) and returns an array of exactly the field's type.
"""

from __future__ import annotations

from array import array
from datetime import datetime, timedelta, timezone
from itertools import accumulate
from typing import Any

import pyarrow as pa

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
MILLISECOND = timedelta(milliseconds=1)


def _bitmap(flags: list[bool]) -> pa.Buffer:
    bits = 0
    for i, flag in enumerate(flags):
        if flag:
            bits |= 1 << i
    return pa.py_buffer(bits.to_bytes((len(flags) + 7) // 8 or 1, "little"))


def _validity(values: list[Any]) -> tuple[pa.Buffer | None, int]:
    present = [v is not None for v in values]
    nulls = present.count(False)
    return (_bitmap(present) if nulls else None), nulls


def _offsets(lengths: list[int]) -> pa.Buffer:
    return pa.py_buffer(array("i", accumulate(lengths, initial=0)).tobytes())  # a page's text is far below 2 GiB


def strings(values: list[str | None]) -> pa.Array:
    encoded = [b"" if v is None else v.encode("utf-8", "surrogatepass") for v in values]
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(pa.string(), len(values), [validity, _offsets([len(b) for b in encoded]),
                                                            pa.py_buffer(b"".join(encoded))], null_count=nulls)


def string_lists(values: list[list[str] | None]) -> pa.Array:
    items = [str(item) for v in values if v for item in v]
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(pa.list_(pa.string()), len(values), [validity, _offsets([len(v or ()) for v in values])],
                                 null_count=nulls, children=[strings(items)])


def booleans(values: list[bool | None]) -> pa.Array:
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(pa.bool_(), len(values), [validity, _bitmap([bool(v) for v in values])],
                                 null_count=nulls)


def _millis(text: str) -> int:
    when = datetime.fromisoformat(text)
    if when.tzinfo is None:  # the index stores UTC instants; a bare time is read as UTC (Arrow's cast refused it)
        when = when.replace(tzinfo=timezone.utc)
    return (when - EPOCH) // MILLISECOND


def utc_millis(values: list[str | None]) -> pa.Array:
    """ISO 8601 instants as ``timestamp[ms, tz=UTC]``."""
    validity, nulls = _validity(values)
    ticks = array("q", (0 if v is None else _millis(v) for v in values))
    return pa.Array.from_buffers(pa.timestamp("ms", tz="UTC"), len(values), [validity, pa.py_buffer(ticks.tobytes())],
                                 null_count=nulls)
