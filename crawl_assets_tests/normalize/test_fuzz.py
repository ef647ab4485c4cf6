"""Property tests: normalizers never crash on arbitrary JSON, are deterministic, and the fast document path
(no pydantic, used by the CLI) writes exactly what the validated path writes, and the rows the pipeline reads
into Arrow in bulk equal the records' own table.

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
from crawl_assets.lake.tables import records_to_arrow
from crawl_assets.normalize.dedupe import BlockBuilder
from crawl_assets.normalize.output import edge_lines, record_line
from crawl_assets.pipeline.normalize.part import add_row, rows_table
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
        whole = b"".join(msgspec.json.encode(dict(zip(EDGE_COLUMNS, e, strict=True))) + b"\n" for e in document_edges(doc))
        assert edge_lines(doc) == whole  # the pieced-together edge lines are whole-object JSON
    records = [doc for doc in docs if not isinstance(doc, Rejection)]
    block = BlockBuilder()
    for doc in records:
        add_row(block, doc)  # what normalized_records writes: its row lines, read by Arrow's JSON reader
    expected = records_to_arrow(json.loads(record_line(doc)) for doc in records)
    assert rows_table(bytes(block.main)).equals(expected)


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


PAGE = {
    "data": [
        TWEET,
        {**TWEET, "id": "102", "note_tweet": {"text": "بلند", "entities": {"cashtags": [{"tag": "ABC"}]}},
         "referenced_tweets": [{"type": "retweeted", "id": "90"}, {"type": "quoted", "id": "91"}],
         "attachments": {"media_keys": ["3_1", "3_2", "3_9"], "poll_ids": ["7"]}, "geo": {"place_id": "p"},
         "withheld": {"copyright": True}, "edit_history_tweet_ids": ["102"], "source": "web", "possibly_sensitive": False,
         "public_metrics": {"like_count": 1, "retweet_count": 2, "reply_count": 3, "quote_count": 4,
                            "bookmark_count": 5, "impression_count": 6}},
    ],
    "includes": {
        "users": [{"id": "11", "username": "Ali"}, {"id": "12", "username": "b"}],
        "media": [{"media_key": "3_1", "type": "photo", "url": "https://p/1.jpg", "width": 10, "height": 20},
                  {"media_key": "3_2", "type": "video", "preview_image_url": "https://p/2.jpg", "duration_ms": 1500,
                   "variants": [{"bit_rate": 100, "content_type": "video/mp4", "url": "https://v/1"},
                                {"content_type": "application/x-mpegURL", "url": "https://v/2"}]}],
        "tweets": [{"id": "90", "text": "اصل"}, {"id": "91", "text": "نقل"}],
    },
    "__twarc": {"retrieved_at": "2024-05-02T10:00:00+00:00"},
}  # fmt: skip


def _deep_mutated(data: st.DataObject, value: object) -> object:
    """``value`` with about one node in ten, at any depth, replaced by arbitrary JSON (or dropped from its object)."""
    roll = data.draw(st.integers(0, 19))
    if roll < 2:
        return data.draw(json_values)
    if isinstance(value, dict):
        mutated = {k: _deep_mutated(data, v) for k, v in value.items()}
        return {k: v for k, v in mutated.items() if v is not _DROP}
    if isinstance(value, list):
        return [v for v in (_deep_mutated(data, v) for v in value) if v is not _DROP]
    return _DROP if roll == 2 else value


_DROP = object()


def test_rich_page_fits_the_fast_path():
    from crawl_assets.sources.x.normalize import _fast_page

    assert _fast_page(_line(PAGE)) is not None
    records = [i for i in normalize_v2(io.BytesIO(_line(PAGE)), name="p", context=CONTEXT) if isinstance(i, Record)]
    assert len(records) == 2 and [m.url for m in records[1].media] == ["https://p/1.jpg", "https://v/1", None]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_x_v2_pages_mutated_at_any_depth(data):
    """Odd values anywhere in a rich page (entities, includes, metrics, note, media variants): the msgspec structs
    and the orjson-parsed page coerced into them give the same records and rejections, the same as validated."""
    page = _deep_mutated(data, PAGE)
    if page is _DROP:
        page = {}
    _same_with_orjson_pages(_line(page))
    _run_both("x-v2", _line(page))


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
