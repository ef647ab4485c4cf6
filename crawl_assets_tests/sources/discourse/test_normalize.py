"""Golden test of format ``discourse``: categories, a topic with a chunk by id, latest posts, bad lines."""

from __future__ import annotations

import io
from pathlib import Path

import orjson

from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.schema.record import Record, Rejection
from crawl_assets.sources.discourse.normalize import normalize_discourse
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


def _line(response, endpoint="posts"):
    return orjson.dumps({"crawl": {"endpoint": endpoint, "host": "forum.example.org",
                                   "retrieved_at": "2026-11-30T04:00:00+00:00"}, "response": response})


def _post(post_id, number, reply_to=None, topic_id=7):
    return {"id": post_id, "topic_id": topic_id, "post_number": number, "reply_to_post_number": reply_to,
            "created_at": "2026-11-01T00:00:00.000Z", "cooked": f"<p>post {post_id}</p>", "username": "bob",
            "user_id": 3, "post_type": 1, "topic_slug": "t"}


def test_targets_anywhere_in_the_batch_resolve_and_a_single_post_answer_is_context_only():
    """Newest-first pages put a reply before its target; a by_number answer teaches its number only."""
    lines = [_line({"latest_posts": [_post(40, 9, reply_to=4), _post(39, 8, reply_to=5)]}),
             _line({"latest_posts": [_post(30, 4, reply_to=2)]}),
             _line({**_post(5, 5), "raw": "post 5"}, endpoint="post_by_number")]
    ctx = NormalizeContext(tenant="acme", source="acme.discourse.f", method="api")
    items = list(normalize_discourse(io.BytesIO(b"\n".join(lines)), name="batch", context=ctx))
    assert not [i for i in items if isinstance(i, Rejection)]
    reply_to = {r.native_id: r.reply_to for r in items}
    assert reply_to == {"40": "discourse:forum.example.org:30", "39": "discourse:forum.example.org:5", "30": None}


def test_posts_waiting_for_a_target_are_bounded(monkeypatch):
    """Beyond PENDING_LIMIT waiting posts the oldest goes out unresolved: memory stays bounded."""
    import crawl_assets.sources.discourse.normalize as discourse

    monkeypatch.setattr(discourse, "PENDING_LIMIT", 1)
    lines = [_line({"latest_posts": [_post(40, 9, reply_to=4), _post(39, 8, reply_to=3)]}),
             _line({"latest_posts": [_post(30, 4), _post(20, 3)]})]
    ctx = NormalizeContext(tenant="acme", source="acme.discourse.f", method="api")
    items = list(normalize_discourse(io.BytesIO(b"\n".join(lines)), name="batch", context=ctx))
    assert [(r.native_id, r.reply_to) for r in items][:1] == [("40", None)]
    assert {r.native_id: r.reply_to for r in items}["39"] == "discourse:forum.example.org:20"
