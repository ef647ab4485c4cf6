"""Golden test of format ``intercom``: a conversation, a webhook notification, bad lines."""

from __future__ import annotations

from pathlib import Path

from crawl_assets.schema.record import Record, Rejection
from crawl_assets_tests.sources.feedback_helpers import assert_golden

GOLDEN = Path(__file__).parent / "golden"


def test_golden_conversations():
    items = assert_golden("intercom", GOLDEN, "input.jsonl", "expected.jsonl")
    records = [i for i in items if isinstance(i, Record)]
    rejections = [i for i in items if isinstance(i, Rejection)]
    assert [r.key for r in records[:2]] == ["intercom:wsa:11:11000", "intercom:wsa:11:1101"]
    opening = records[0]
    assert opening.kind == "message" and opening.lang == "fa" and opening.author_id == "user:u1"
    note = next(r for r in records if r.kind == "note")
    assert note.urls == ["https://jira.example.com/X-1"] and note.media[0].mime == "text/plain"
    assert note.edited_at is not None and note.reply_to == opening.key
    redacted = next(r for r in records if r.native_id == "1199002")
    assert redacted.deleted and redacted.author_id == "lead:l5"
    assert "intercom:wsa:12:12000" in {r.key for r in records}  # read through the notification's data.item
    assert [(r.line, r.error) for r in rejections if r.error] == [(3, True), (4, True)]
    assert all("without a body" in r.reason for r in rejections if not r.error)
