"""Golden test of format ``discourse``: categories, a topic with a chunk by id, latest posts, bad lines."""

from __future__ import annotations

from pathlib import Path

from crawl_assets.schema.record import Record, Rejection
from crawl_assets_tests.sources.feedback_helpers import assert_golden

GOLDEN = Path(__file__).parent / "golden"


def test_golden_forum():
    items = assert_golden("discourse", GOLDEN, "input.jsonl", "expected.jsonl")
    records = [i for i in items if isinstance(i, Record)]
    first = records[0]
    assert first.key == "discourse:forum.example.org:1" and first.kind == "post"
    assert first.metadata["category_name"] == "Android" and first.metadata["tags"] == ["crash", "v1"]
    replies = [r for r in records if r.kind == "reply"]
    assert replies and all(r.reply_to for r in replies)
    errors = [(i.line, i.reason[:40]) for i in items if isinstance(i, Rejection) and i.error]
    assert [line for line, _ in errors] == [5, 6]
