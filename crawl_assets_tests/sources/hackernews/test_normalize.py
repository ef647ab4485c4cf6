"""Golden test of format ``hackernews``: a story with its comment thread, bad hits and a bad page; and a poll
with its options, a shape our goldens lacked (issue 14 item 14)."""

from __future__ import annotations

from pathlib import Path

import orjson

from crawl_assets.schema.record import Record, Rejection
from crawl_assets_tests.normalize.helpers import run
from crawl_assets_tests.normalize.shapes import envelope, hn_item, lines
from crawl_assets_tests.sources.feedback_helpers import assert_golden

GOLDEN = Path(__file__).parent / "golden"


def test_golden_search_page():
    items = assert_golden("hackernews", GOLDEN, "input.jsonl", "expected.jsonl")
    records = [i for i in items if isinstance(i, Record)]
    story = next(r for r in records if r.native_id == "40000000")
    assert story.text == "Show HN: feedback tool 0\n\nWe built a tool & want feedback"
    assert [r.kind for r in records].count("comment") == 4
    assert [(i.line, i.error) for i in items if isinstance(i, Rejection)] == [(2, True), (2, True), (3, True)]


def _hn(*hits: dict) -> bytes:
    return orjson.dumps({"crawl": {"endpoint": "search_by_date", "query": "poll", "tags": "(poll,pollopt)",
                                   "retrieved_at": "2026-11-30T04:00:00+00:00"},
                         "response": {"hits": list(hits), "nbHits": len(hits), "page": 0}}) + b"\n"


def test_hacker_news_poll_options_belong_to_their_poll():
    poll = {"objectID": "41000000", "created_at": "2026-11-01T00:01:00Z", "author": "pollster",
            "title": "Poll: Which editor do you use?", "url": None, "story_text": None, "points": 40,
            "num_comments": 12, "story_id": 41000000, "parent_id": None,
            "_tags": ["poll", "author_pollster", "story_41000000"]}
    option = {"objectID": "41000001", "created_at": "2026-11-01T00:01:00Z", "author": "pollster",
              "title": None, "url": None, "story_text": "Vim", "comment_text": None, "points": 25,
              "story_id": 41000000, "parent_id": 41000000, "_tags": ["pollopt", "author_pollster", "story_41000000"]}
    records, rejections = run("hackernews", _hn(poll, option))
    assert not rejections
    poll_record, option_record = records
    assert poll_record.kind == "post" and poll_record.metadata["item_type"] == "poll"
    assert option_record.kind == "poll_option" and option_record.text == "Vim"
    assert option_record.metadata["poll"] == "hackernews:41000000" and option_record.metadata["item_type"] == "pollopt"
    assert option_record.conversation_id == poll_record.conversation_id == "hackernews:41000000"
    assert option_record.metrics.likes == 25 and option_record.reply_to is None


def test_code_blocks_keep_their_lines_and_indentation():
    """Issue 29 item 5: HN writes code as <pre><code> with the lines' own newlines and leading spaces."""
    comment = {"objectID": "41000010", "created_at": "2026-11-01T00:05:00Z", "author": "coder", "story_id": 41000000,
               "parent_id": 41000000, "_tags": ["comment", "author_coder", "story_41000000"],
               "comment_text": "Try this:<p><pre><code>  def total(xs):\n      return sum(\n          x for x in xs\n      )\n"
                               "</code></pre>\nWorks for me &amp; others."}
    records, _ = run("hackernews", _hn(comment))
    assert records[0].text == ("Try this:\n  def total(xs):\n      return sum(\n          x for x in xs\n      )\n"
                               "Works for me & others.")


def test_firebase_items_are_read_bare_or_in_an_envelope():
    """Issue 29 item 15: the official API's items (/v0/item/N.json)."""
    story = hn_item(41000100, "story", descendants=2, kids=[41000101], score=12, title="Show HN: A tiny queue",
                    url="https://example.com/queue")
    comment = hn_item(41000101, "comment", parent=41000100, kids=[], text="Nice.<p>Does it <i>persist</i>?")
    gone = {"deleted": True, "id": 41000102, "parent": 41000101, "time": 1793491600, "type": "comment"}
    wrapped = orjson.dumps(envelope("item", comment, tags="item")) + b"\n"
    records, rejections = run("hackernews", lines(story, gone) + wrapped + b'{"unrelated": 1}\n')
    by_id = {r.native_id: r for r in records}
    assert by_id["41000100"].text == "Show HN: A tiny queue" and by_id["41000100"].kind == "post"
    assert by_id["41000100"].metrics.likes == 12 and by_id["41000100"].metrics.replies == 2
    assert by_id["41000100"].urls == ["https://example.com/queue"]
    assert by_id["41000101"].reply_to == "hackernews:41000100" and by_id["41000101"].text == "Nice.\nDoes it persist?"
    assert by_id["41000102"].deleted and by_id["41000102"].author_id is None
    (refused,) = rejections
    assert refused.line == 4 and "Firebase API item (/v0/item/{id}.json)" in refused.reason
