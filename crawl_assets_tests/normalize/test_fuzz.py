"""Property tests: normalizers never crash on arbitrary JSON, are deterministic, and the fast document path
(no pydantic, used by the CLI) writes exactly what the validated path writes.

~300 examples per normalizer by default (CI stays fast); the fuzz campaign scales them up elsewhere.
"""

from __future__ import annotations

import io
import json

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crawl_assets.normalize import NormalizeContext, normalize_documents, normalize_stream
from crawl_assets.normalize.edges import EDGE_COLUMNS, document_edges
from crawl_assets.normalize.output import edge_lines, record_line
from crawl_assets.schema import Record, Rejection
from crawl_assets.sources.x.normalize import normalize_v2

CONTEXT = NormalizeContext(tenant="t", source="fuzz", method="api", run_id="r")
EXAMPLES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40)
    | st.sampled_from(["2024-05-01T10:00:00.000Z", "2024-05-01T10:00:00+03:30", "1709294400", "123", "", "x:1",
                       "channel123", "user5", "سلام #تگ @کاربر", "😀", "\u200c", "Message", "PeerChannel", "service"])
)  # fmt: skip
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)


def _run_both(fmt: str, payload: bytes) -> None:
    """Both paths on one payload: no exception, same verdicts, same JSON for every record."""
    validated = list(normalize_stream(fmt, io.BytesIO(payload), name="fuzz", context=CONTEXT))
    again = list(normalize_stream(fmt, io.BytesIO(payload), name="fuzz", context=CONTEXT))
    docs = list(normalize_documents(fmt, io.BytesIO(payload), name="fuzz", context=CONTEXT))
    assert [i.model_dump() for i in validated] == [i.model_dump() for i in again]  # deterministic
    assert len(docs) == len(validated)
    for item, doc in zip(validated, docs, strict=True):
        if isinstance(item, Rejection):
            assert doc == item
            assert len(item.snippet) <= 500 and item.reason
            continue
        assert isinstance(item, Record) and isinstance(doc, dict)
        fast = record_line(doc)  # what the CLI writes
        slow = item.model_dump_json()
        assert json.loads(fast) == json.loads(slow)
        assert list(json.loads(fast)) == list(json.loads(slow))  # same field order
        assert [list(m) for m in json.loads(fast)["media"]] == [list(m) for m in json.loads(slow)["media"]]
        whole = [msgspec.json.encode(dict(zip(EDGE_COLUMNS, edge, strict=True))) + b"\n" for edge in document_edges(doc)]
        assert edge_lines(doc) == b"".join(whole)  # the pieced-together edge lines are whole-object JSON


def _same_with_orjson_pages(payload: bytes) -> None:
    """x-v2's msgspec page decoding gives exactly what whole-page orjson parsing gives."""
    fast = list(normalize_v2(io.BytesIO(payload), name="fuzz", context=CONTEXT, validate=False))
    slow = list(normalize_v2(io.BytesIO(payload), name="fuzz", context=CONTEXT, validate=False, fast=False))
    assert fast == slow


def _line(value) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


@EXAMPLES
@given(st.lists(json_values, min_size=1, max_size=4))
def test_line_formats_on_arbitrary_json(values):
    payload = b"\n".join(_line(v) for v in values)
    for fmt in ("telegram", "x-v2"):
        _run_both(fmt, payload)
    _same_with_orjson_pages(payload)


@EXAMPLES
@given(json_values)
def test_document_formats_on_arbitrary_json(value):
    _run_both("telegram-export", _line(value))
    _run_both("x-archive", b"window.YTD.tweets.part0 = " + _line(value))


@EXAMPLES
@given(st.binary(max_size=200))
def test_arbitrary_bytes(data):
    for fmt in ("telegram", "x-v2", "telegram-export", "x-archive"):
        _run_both(fmt, data)


TWEET = {"id": "101", "text": "سلام #خبر @ali https://t.co/a", "author_id": "11", "created_at": "2024-05-01T10:00:00.000Z",
         "conversation_id": "100", "lang": "fa", "entities": {"hashtags": [{"tag": "خبر"}], "mentions": [{"username": "ali"}],
         "urls": [{"url": "https://t.co/a", "expanded_url": "https://e.org"}]}, "attachments": {"media_keys": ["3_1"]},
         "referenced_tweets": [{"type": "replied_to", "id": "100"}], "public_metrics": {"like_count": 1},
         "note_tweet": {"text": "long", "entities": {}}}  # fmt: skip
MESSAGE = {"_": "Message", "id": 5, "peer_id": {"_": "PeerChannel", "channel_id": 77}, "date": "2024-03-01T12:00:00+00:00",
           "message": "سلام 😀 #تگ", "entities": [{"_": "MessageEntityHashtag", "offset": 8, "length": 3}],
           "fwd_from": {"_": "MessageFwdHeader", "from_id": {"_": "PeerChannel", "channel_id": 9}, "channel_post": 3},
           "reply_to": {"_": "MessageReplyHeader", "reply_to_msg_id": 4}, "media": {"_": "MessageMediaPhoto",
           "photo": {"id": 1, "sizes": [{"w": 10, "h": 10, "size": 5}]}}, "reactions": {"results": [
           {"reaction": {"_": "ReactionEmoji", "emoticon": "👍"}, "count": 2}]}, "views": 3, "post": True}  # fmt: skip
EXPORT_MESSAGE = {"id": 5, "type": "message", "date_unixtime": "1709294400", "from_id": "user5", "text": ["a ",
                  {"type": "hashtag", "text": "#تگ"}], "reply_to_message_id": 4, "photo": "p.jpg", "width": 3,
                  "reactions": [{"emoji": "👍", "count": 1}], "edited_unixtime": "1709294500"}  # fmt: skip
ARCHIVE_TWEET = {"id_str": "10", "full_text": "RT @x: hi", "created_at": "Wed Oct 10 20:19:24 +0000 2018",
                 "entities": {"hashtags": [{"text": "a"}], "user_mentions": [{"screen_name": "x"}]},
                 "extended_entities": {"media": [{"type": "photo", "id_str": "1"}]}}  # fmt: skip


def _mutated(base: dict) -> st.SearchStrategy[dict]:
    """``base`` with some of its fields (and some new ones) replaced by arbitrary JSON."""
    keys = st.sampled_from(sorted(base) + ["extra"])
    return st.dictionaries(keys, json_values, max_size=4).map(lambda changes: {**base, **changes})


@EXAMPLES
@given(st.lists(_mutated(TWEET), min_size=1, max_size=3), json_values)
def test_x_v2_mutated_tweets(tweets, includes):
    page = {"data": tweets, "includes": includes if isinstance(includes, dict) else {"users": [includes]}}
    _run_both("x-v2", _line(page))
    _same_with_orjson_pages(_line(page))
    clean = {"data": [{**TWEET, **{k: v for k, v in t.items() if k in ("text", "lang", "public_metrics")}}
                      for t in tweets], "includes": {"users": [{"id": "11", "username": "s"}]}}  # fmt: skip
    _same_with_orjson_pages(_line(clean))


@EXAMPLES
@given(st.lists(_mutated(MESSAGE), min_size=1, max_size=3))
def test_telethon_mutated_messages(messages):
    _run_both("telegram", b"\n".join(_line(m) for m in messages))


@EXAMPLES
@given(st.lists(_mutated(EXPORT_MESSAGE), min_size=1, max_size=3), json_values)
def test_export_mutated_messages(messages, chat_id):
    _run_both("telegram-export", _line({"name": "c", "type": "public_channel", "id": chat_id, "messages": messages}))
    _run_both("telegram-export", _line({"name": "c", "type": "public_channel", "id": 77, "messages": messages}))


@EXAMPLES
@given(st.lists(_mutated(ARCHIVE_TWEET), min_size=1, max_size=3))
def test_archive_mutated_tweets(tweets):
    _run_both("x-archive", b"window.YTD.tweets.part0 = " + _line([{"tweet": t} for t in tweets]))
