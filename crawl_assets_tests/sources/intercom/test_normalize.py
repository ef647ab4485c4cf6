"""Golden test of format ``intercom``: a conversation, a webhook notification, bad lines."""

from __future__ import annotations

from pathlib import Path

import orjson

from crawl_assets.schema.record import Record, Rejection
from crawl_assets_tests.normalize.helpers import run
from crawl_assets_tests.normalize.shapes import (
    envelope, intercom_part, intercom_v1_conversation, intercom_v1_notification,
)  # fmt: skip
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
    assert note.edited_at is None and note.reply_to == opening.key  # updated_at alone is no edit (issue 29 item 12)
    redacted = next(r for r in records if r.native_id == "1199002")
    assert redacted.deleted and redacted.author_id == "lead:l5"
    assert "intercom:wsa:12:12000" in {r.key for r in records}  # read through the notification's data.item
    assert [(r.line, r.error) for r in rejections if r.error] == [(3, True), (4, True)]
    assert all("without a body" in r.reason for r in rejections if not r.error)


def _lines(*responses) -> bytes:
    return b"".join(orjson.dumps(envelope("conversation", r, workspace="wsa")) + b"\n" for r in responses)


def test_pre_2_0_conversation_opening_message_and_replies():
    """Issue 29 item 1: ``conversation_message`` instead of ``source``, as an API answer and inside a webhook."""
    answer = intercom_v1_conversation("147", "Hi, the export button does nothing",
                                      intercom_part("4412", "<p>Which browser?</p>", 1400857494))
    hook = intercom_v1_notification(intercom_v1_conversation("148", "Where is my invoice?"))
    records, rejections = run("intercom", _lines(answer, hook))
    assert not rejections
    by_key = {r.key: r for r in records}
    assert set(by_key) == {"intercom:wsa:147:147001", "intercom:wsa:147:4412", "intercom:wsa:148:148001"}
    opening = by_key["intercom:wsa:147:147001"]
    assert opening.kind == "message" and opening.text == "Hi, the export button does nothing"
    assert opening.author_id == "user:5310d8e7598c9a0b24000002" and opening.created_at.timestamp() == 1400850973
    assert by_key["intercom:wsa:147:4412"].reply_to == opening.key


def test_conversation_without_opening_message_is_a_rejection():
    """Issue 29 item 1: a conversation of an unknown shape (no opening message) is counted, never silent."""
    conv = intercom_v1_conversation("149", "x", intercom_part("5001", "<p>hello</p>", 1400857494))
    del conv["conversation_message"]
    records, rejections = run("intercom", _lines(conv))
    assert [r.key for r in records] == ["intercom:wsa:149:5001"]
    assert [(r.line, r.error) for r in rejections] == [(1, True)] and "no opening message" in rejections[0].reason


def test_redacted_part_is_a_deletion_and_updated_at_alone_is_no_edit():
    """Issue 29 item 12."""
    tagged = intercom_part("6001", "<p>Please check</p>", 1400857000, updated_at=1400859000)  # tagged later
    redacted = intercom_part("6002", "<p>redacted</p>", 1400857100, updated_at=1400858000, redacted=True)
    records, _ = run("intercom", _lines(intercom_v1_conversation("150", "hi", tagged, redacted)))
    by_id = {r.native_id: r for r in records}
    assert by_id["6001"].edited_at is None and not by_id["6001"].deleted
    assert by_id["6002"].deleted and by_id["6002"].edited_at is None
    assert by_id["6002"].deleted_at.timestamp() == 1400858000
