"""Systematic bad payloads for every normalizer: each field of each seed with each wrong type,
truncation at many points, oversized lines and documents, deep nesting, empty input."""

from __future__ import annotations

import copy

import orjson
import pytest

from crawl_assets.core import catalog
from crawl_assets_tests.fuzz.checks import check_normalizer
from crawl_assets_tests.fuzz.mutate import WRONG_TYPES
from crawl_assets_tests.fuzz.seeds import seeds
from crawl_assets.schema import Rejection

FORMAT_NAMES = sorted(catalog.catalog().formats())


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_every_field_with_every_wrong_type(fmt):
    spec = seeds()[fmt]
    for seed in spec.items[:4]:
        if not isinstance(seed, dict):
            continue
        for field in list(seed):
            for wrong in WRONG_TYPES:
                item = copy.deepcopy(seed)
                item[field] = wrong
                check_normalizer(fmt, spec.encode([item, seed]), line_based=spec.line_based)
            item = copy.deepcopy(seed)
            del item[field]
            check_normalizer(fmt, spec.encode([item]), line_based=spec.line_based)


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_truncated_everywhere(fmt):
    spec = seeds()[fmt]
    payload = spec.encode(list(spec.items[:5]))
    step = max(1, len(payload) // 60)
    for cut in range(0, len(payload), step):
        check_normalizer(fmt, payload[:cut], line_based=spec.line_based)


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_oversized_payloads(fmt):
    spec = seeds()[fmt]
    seed = spec.items[-1]
    huge_text = copy.deepcopy(seed)
    if isinstance(huge_text, list):  # a CSV row: the longest cell
        # 100 KB: larger cells hit the csv module's field limit (test_play_csv_cell_over_the_csv_limit)
        huge_text[max(range(len(huge_text)), key=lambda i: len(huge_text[i]))] = "ب" * 100_000
    else:
        key = next((k for k in ("text", "message", "full_text", "response") if k in huge_text), "text")
        huge_text[key] = "ب" * 1_000_000
    assert check_normalizer(fmt, spec.encode([huge_text, seed]), line_based=spec.line_based)
    assert check_normalizer(fmt, spec.encode([seed] * 1000), line_based=spec.line_based)
    if fmt != "play-csv":  # see test_play_csv_cell_over_the_csv_limit_is_rejected
        long_line = b'{"id": 1, "x": "' + b"a" * 3_000_000 + b'"'  # unterminated, 3 MB
        check_normalizer(fmt, long_line, line_based=spec.line_based)


@pytest.mark.parametrize("fmt", [f for f in FORMAT_NAMES if seeds()[f].line_based])
def test_deep_nesting_in_a_line(fmt):
    nested = b"[" * 100_000 + b"]" * 100_000
    check_normalizer(fmt, nested + b"\n" + b'{"a":' * 50_000 + b"1" + b"}" * 50_000, line_based=True)


@pytest.mark.parametrize("fmt", ["telegram-export", "x-archive"])
def test_deeply_nested_item_in_a_document_is_rejected(fmt):
    spec = seeds()[fmt]
    item = b"[" * 5000 + b"]" * 5000  # 20,000 levels: ~900 MB of memory before the RecursionError
    document = spec.encode([]).replace(b"[]", b"[" + item + b"]")
    check_normalizer(fmt, document, line_based=False)


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@pytest.mark.parametrize("payload", [b"", b"\n", b"   \n\t\n", b"\x00", b"null", b"[]", b"{}", b"\xef\xbb\xbf"])
def test_empty_and_trivial(fmt, payload):
    spec = seeds()[fmt]
    check_normalizer(fmt, payload, line_based=spec.line_based)


def test_seeds_are_valid_input():
    """The seeds make records (else the fuzzers would start from broken input)."""
    from crawl_assets.sources.x.normalize_archive import POST_FILES

    for name, spec in seeds().items():
        assert spec.items, f"{name}: no seeds"
        items = check_normalizer(spec.fmt, spec.encode(list(spec.items)), line_based=spec.line_based)
        refused = name.startswith("x-archive:") and name.split(":", 1)[1] not in POST_FILES  # like.js & co
        assert refused != any(not isinstance(i, Rejection) for i in items), name
        assert orjson.dumps([i.model_dump(mode="json") for i in items])


def test_play_csv_cell_over_the_csv_limit_is_rejected():
    spec = seeds()["play-csv"]
    row = list(spec.items[0])
    row[-1] = "x" * 200_000
    check_normalizer("play-csv", spec.encode([row, list(spec.items[0])]), line_based=False)
