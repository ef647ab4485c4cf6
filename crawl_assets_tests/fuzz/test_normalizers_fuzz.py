"""Hypothesis fuzzing of every installed format's normalizer: mutated valid items (wrong types, missing and
unknown fields, huge and deeply nested values) and damaged bytes (truncation, flipped bytes, junk).

Size: ``CRAWL_FUZZ_EXAMPLES`` examples per test and format (default 150, the CI size);
``bench/fuzz_full.py`` runs 10,000 (docs/RELIABILITY.md).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crawl_assets.core import catalog
from crawl_assets_tests.fuzz.checks import check_normalizer
from crawl_assets_tests.fuzz.mutate import damaged_bytes, mutated
from crawl_assets_tests.fuzz.seeds import seeds

EXAMPLES = int(os.environ.get("CRAWL_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=EXAMPLES < 1000,
                suppress_health_check=list(HealthCheck))
pytestmark = pytest.mark.slow
SEED_SETS = sorted(seeds())


def test_every_format_has_seeds():
    assert set(catalog.catalog().formats()) <= set(seeds()), "a new normalizer needs seeds in crawl_assets_tests/fuzz/seeds.py"
    assert {spec.fmt for spec in seeds().values()} == set(catalog.catalog().formats())


@pytest.mark.parametrize("name", SEED_SETS)
@FUZZ
@given(data=st.data())
def test_mutated_items(name, data):
    spec = seeds()[name]
    fmt = spec.fmt
    n = data.draw(st.integers(1, 3))
    items = [data.draw(mutated(spec.items[data.draw(st.integers(0, len(spec.items) - 1))], max_huge=spec.max_huge))
             for _ in range(n)]
    check_normalizer(fmt, spec.encode(items), line_based=spec.line_based)


@pytest.mark.parametrize("name", SEED_SETS)
@FUZZ
@given(data=st.data())
def test_damaged_bytes(name, data):
    spec = seeds()[name]
    fmt = spec.fmt
    start = data.draw(st.integers(0, len(spec.items) - 1))
    payload = spec.encode(list(spec.items[start:start + 3]))
    damaged = data.draw(damaged_bytes(payload))
    check_normalizer(fmt, damaged, line_based=spec.line_based)
