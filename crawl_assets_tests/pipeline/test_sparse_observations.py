"""A later, sparser observation of an item keeps what it states and never erases what an earlier, richer one knew
(issue 29 item 13; the per-field rule is docs/SCHEMA.md, "Observations of one item")."""

from __future__ import annotations

import orjson

from crawl_assets_tests.normalize.shapes import discourse_post, envelope
from crawl_assets_tests.pipeline.lake_normalize import RawInput, normalize_in_lake

SOURCE = "acme.discourse.forum"
HOST = "forum.example.org"


def _line(endpoint: str, response: dict) -> bytes:
    return orjson.dumps(envelope(endpoint, response, host=HOST))


def test_a_post_read_again_without_its_topic_keeps_the_topic(tmp_path):
    categories = _line("categories", {"category_list": {"categories": [{"id": 5, "name": "Support", "slug": "support"}]}})
    first = discourse_post(10, 1001, 1, "<p>How do I export?</p>")
    reply = discourse_post(20, 1001, 2, "<p>Use the menu</p>", reply_to_post_number=1, reads=3)
    topic = _line("topic", {"id": 1001, "title": "Exporting data", "slug": "exporting-data", "category_id": 5,
                            "tags": ["export"], "post_stream": {"posts": [first, reply]}})
    # a later chunk of the topic's posts (/t/{id}/posts.json): no title, category or tags; the reply edited
    edited = dict(reply, cooked="<p>Use the menu, then Export</p>", version=2, reads=9,
                  updated_at="2026-11-02T00:00:00.000Z")
    chunk = _line("topic_posts", {"id": 1001, "post_stream": {"posts": [edited]}})
    out = normalize_in_lake(tmp_path, "discourse", SOURCE, [
        RawInput("20261101T000000000000Z-r1-0000", "discourse", [categories, topic], method="api"),
        RawInput("20261102T000000000000Z-r1-0000", "discourse", [chunk], method="api")])
    later = {r["key"]: r for r in out.parts["20261102T000000000000Z-r1-0000"]}[f"discourse:{HOST}:20"]
    assert later["text"] == "Use the menu, then Export" and later["metrics"]["views"] == 9, "what it states wins"
    assert later["edited_at"] is not None
    meta = later["metadata"]
    assert (meta["topic_title"], meta["category_name"], meta["tags"]) == ("Exporting data", "Support", ["export"])
    assert later["reply_to"] == f"discourse:{HOST}:10", "its target was in the earlier batch only"
    assert "context_missing" in later["provenance"]["flags"]
