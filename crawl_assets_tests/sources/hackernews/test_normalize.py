"""Golden test of format ``hackernews``: a story with its comment thread, bad hits and a bad page."""

from __future__ import annotations

from pathlib import Path

from crawl_assets.schema.record import Record, Rejection
from crawl_assets_tests.sources.feedback_helpers import assert_golden

GOLDEN = Path(__file__).parent / "golden"


def test_golden_search_page():
    items = assert_golden("hackernews", GOLDEN, "input.jsonl", "expected.jsonl")
    records = [i for i in items if isinstance(i, Record)]
    story = next(r for r in records if r.native_id == "40000000")
    assert story.text == "Show HN: feedback tool 0\n\nWe built a tool & want feedback"
    assert [r.kind for r in records].count("comment") == 4
    assert [(i.line, i.error) for i in items if isinstance(i, Rejection)] == [(2, True), (2, True), (3, True)]
