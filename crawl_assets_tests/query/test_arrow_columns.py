"""The Parquet export's Arrow columns, built from buffers, equal what ``pa.array`` builds from the same values
(nulls, empty lists, non-ASCII text, instants with ``Z``, offsets and fractions)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from crawl_assets.query import arrow_columns

TEXTS = ["سلام دنیا", None, "", "e\u0301\u200c", "x" * 300, None, "a\nb"]


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 2000])
def test_strings_and_booleans_equal_pa_array(n: int) -> None:
    texts = (TEXTS * (n // len(TEXTS) + 1))[:n]
    flags = ([True, None, False] * n)[:n]
    built = arrow_columns.strings(texts)
    built.validate(full=True)
    assert built.equals(pa.array(texts, pa.string())) and built.null_count == texts.count(None)
    flagged = arrow_columns.booleans(flags)
    flagged.validate(full=True)
    assert flagged.equals(pa.array(flags, pa.bool_()))


def test_string_lists_equal_pa_array() -> None:
    lists = [["اقتصاد", "news"], None, [], ["x"], [], None, ["a", "b", "c"]] * 3
    built = arrow_columns.string_lists(lists)
    built.validate(full=True)
    assert built.equals(pa.array(lists, pa.list_(pa.string()))) and built.to_pylist() == lists


def test_instants_are_utc_milliseconds() -> None:
    values = ["2025-01-01T00:00:00Z", None, "2025-03-01T03:30:00+03:30", "2024-12-31T23:59:59.999Z",
              "1969-12-31T23:59:59.001Z"]
    built = arrow_columns.utc_millis(values)
    built.validate(full=True)
    expected = pa.array(values, pa.string()).cast(pa.timestamp("ms", tz="UTC"))
    assert built.equals(expected), (built, expected)
    bare = arrow_columns.utc_millis(["2025-01-01T00:00:00"])  # no offset: read as UTC (Arrow's cast refuses it)
    assert bare.equals(arrow_columns.utc_millis(["2025-01-01T00:00:00Z"]))
