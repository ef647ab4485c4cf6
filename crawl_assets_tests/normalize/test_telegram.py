"""Golden tests for ``telegram`` (Telethon Message.to_json() per line) and ``telegram-export`` (result.json).

Telethon payloads are made by the real Telethon classes (``.to_json()``), so the shapes are the library's.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from telethon.tl import types as T

from crawl_assets.schema import Record
from crawl_assets_tests.normalize.helpers import CONTEXT, SAMPLES, lines, run

CHANNEL = 1234567890
WHEN = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)


def _message(**fields) -> T.Message:
    base = dict(id=42, peer_id=T.PeerChannel(CHANNEL), date=WHEN, message="", post=True)
    base.update(fields)
    return T.Message(**base)


def test_channel_post_with_entities_media_reactions_and_edit():
    # UTF-16 offsets: the emoji before the hashtag counts 2 code units, 1 Python character.
    text = "سلام 😀 #خبر_فوري @Some_One https://example.org/a لینک"
    def utf16(s):
        return len(s.encode("utf-16-le")) // 2
    tag_at = utf16(text[: text.index("#")])
    mention_at = utf16(text[: text.index("@")])
    url_at = utf16(text[: text.index("https")])
    link_at = utf16(text[: text.index("لینک")])
    message = _message(
        message=text,
        entities=[
            T.MessageEntityHashtag(offset=tag_at, length=9),
            T.MessageEntityMention(offset=mention_at, length=9),
            T.MessageEntityUrl(offset=url_at, length=len("https://example.org/a")),
            T.MessageEntityTextUrl(offset=link_at, length=4, url="https://example.com/linked"),
            T.MessageEntityMentionName(offset=0, length=4, user_id=777),
        ],
        media=T.MessageMediaPhoto(photo=T.Photo(id=5, access_hash=1, file_reference=b"\x01", date=WHEN,
            sizes=[T.PhotoSize(type="m", w=320, h=240, size=999), T.PhotoSize(type="x", w=800, h=600, size=12345)],
            dc_id=2)),
        views=100, forwards=3, replies=T.MessageReplies(replies=2, replies_pts=1),
        edit_date=datetime(2024, 3, 1, 13, 0, tzinfo=timezone.utc), post_author="Editor",
        reactions=T.MessageReactions(results=[
            T.ReactionCount(reaction=T.ReactionEmoji(emoticon="👍"), count=5),
            T.ReactionCount(reaction=T.ReactionCustomEmoji(document_id=77), count=1)]),
    )  # fmt: skip
    records, rejections = run("telegram", lines(message.to_json()))
    assert rejections == []
    (record,) = records
    assert record.key == f"telegram:{CHANNEL}:42"
    assert (record.platform, record.tenant, record.source, record.native_id) == ("telegram", "acme", "unit", "42")
    assert record.kind == "post"
    assert record.author_id == str(CHANNEL)  # a channel post without a sender: the channel
    assert record.text == text
    assert record.hashtags == ["خبر_فوری"]
    assert record.mentions == ["some_one"]
    assert record.urls == ["https://example.org/a", "https://example.com/linked"]
    assert record.metadata["mention_user_ids"] == ["777"]
    assert record.metadata["post_author"] == "Editor"
    assert record.created_at == WHEN
    assert record.edited_at == datetime(2024, 3, 1, 13, tzinfo=timezone.utc)
    assert record.media[0].model_dump(exclude_none=True) == {
        "type": "photo", "id": "5", "mime": "image/jpeg", "size": 12345, "width": 800, "height": 600}  # fmt: skip
    assert record.metrics.views == 100 and record.metrics.forwards == 3 and record.metrics.replies == 2
    assert record.metrics.reactions == {"👍": 5, "custom:77": 1}
    assert record.lang == "fa"
    assert "ي" not in record.text_clean and "😀" in record.text_clean
    assert record.conversation_id == record.key
    prov = record.provenance
    assert (prov.method, prov.source, prov.format, prov.run_id) == ("api", "unit", "telegram", "run-1")
    assert (prov.raw_pointer, prov.raw_line) == ("lake/raw/batch-1.jsonl.gz", 1)
    assert prov.collected_at == CONTEXT.collected_at


def test_reply_in_other_chat_forward_and_group_sender():
    reply = _message(
        id=50, peer_id=T.PeerChannel(CHANNEL), post=False, from_id=T.PeerUser(555), message="reply text here",
        reply_to=T.MessageReplyHeader(reply_to_msg_id=7, reply_to_peer_id=T.PeerChannel(999), reply_to_top_id=3),
    )  # fmt: skip
    same_chat = _message(id=51, message="answer", reply_to=T.MessageReplyHeader(reply_to_msg_id=50))
    forward = _message(
        id=52, message="forwarded post text",
        fwd_from=T.MessageFwdHeader(date=WHEN, from_id=T.PeerChannel(888), channel_post=17, post_author="x"),
    )  # fmt: skip
    anonymous_forward = _message(id=53, message="hidden origin", fwd_from=T.MessageFwdHeader(date=WHEN, from_name="Z"))
    records, rejections = run("telegram", lines(reply.to_json(), same_chat.to_json(), forward.to_json(),
                                                anonymous_forward.to_json()))  # fmt: skip
    assert rejections == []
    by_id = {r.native_id: r for r in records}
    assert by_id["50"].reply_to == "telegram:999:7"
    assert by_id["50"].conversation_id == "telegram:999:3"
    assert by_id["50"].author_id == "555" and by_id["50"].kind == "reply"
    assert by_id["51"].reply_to == f"telegram:{CHANNEL}:50"
    assert by_id["52"].repost_of == "telegram:888:17" and by_id["52"].kind == "repost"
    assert by_id["52"].metadata["forwarded_from"]["from_id"] == "888"
    assert by_id["53"].repost_of is None and by_id["53"].kind == "repost"
    assert by_id["53"].metadata["forwarded_from"] == {"from_name": "Z", "date": "2024-03-01T12:00:00+00:00"}


def test_document_media_kinds():
    video = T.MessageMediaDocument(document=T.Document(id=9, access_hash=1, file_reference=b"", date=WHEN,
        mime_type="video/mp4", size=10**6, dc_id=2,
        attributes=[T.DocumentAttributeVideo(duration=12.5, w=640, h=360), T.DocumentAttributeFilename("a.mp4")]))
    voice = T.MessageMediaDocument(document=T.Document(id=10, access_hash=1, file_reference=b"", date=WHEN,
        mime_type="audio/ogg", size=2000, dc_id=2, attributes=[T.DocumentAttributeAudio(duration=3, voice=True)]))
    page = T.MessageMediaWebPage(webpage=T.WebPage(id=1, url="https://ex.com/a", display_url="ex.com/a", hash=0,
        attributes=[]))  # fmt: skip
    records, _ = run("telegram", lines(*(_message(id=i, media=m).to_json() for i, m in enumerate([video, voice, page]))))
    media = [r.media[0] for r in records]
    assert (media[0].type, media[0].mime, media[0].duration, media[0].width, media[0].size) == (
        "video", "video/mp4", 12.5, 640, 10**6)  # fmt: skip
    assert (media[1].type, media[1].duration) == ("voice", 3.0)
    assert (media[2].type, media[2].url) == ("webpage", "https://ex.com/a")
    assert records[2].urls == ["https://ex.com/a"]


def test_service_and_empty_messages_are_counted_not_records():
    service = T.MessageService(id=43, peer_id=T.PeerChannel(CHANNEL), date=WHEN,
                               action=T.MessageActionChatEditTitle(title="x"), reply_to=None)  # fmt: skip
    empty = T.MessageEmpty(id=44, peer_id=T.PeerChannel(CHANNEL))
    records, rejections = run("telegram", lines(service.to_json(), empty.to_json()))
    assert records == []
    assert [(r.reason, r.error, r.line) for r in rejections] == [
        ("service message", False, 1), ("empty message (deleted or inaccessible)", False, 2)]  # fmt: skip


def test_malformed_lines_are_rejected_with_line_and_the_rest_goes_on():
    good = _message(id=60, message="ok").to_json()
    payload = lines(good, "not json", "[1, 2]", '{"_": "Message", "id": 1}', '{"_": "Chat"}',
                    json.dumps({**json.loads(good), "date": "yesterday"}), "", good.replace('"id": 60', '"id": 61'))
    records, rejections = run("telegram", payload)
    assert [r.native_id for r in records] == ["60", "61"]
    assert [r.line for r in rejections] == [2, 3, 4, 5, 6]
    reasons = [r.reason for r in rejections]
    assert reasons[0].startswith("invalid JSON")
    assert "peer_id" in reasons[2]
    assert "'_'" in reasons[3]
    assert "date" in reasons[4]
    assert all(r.error and r.name == "input.jsonl" and len(r.snippet) <= 500 for r in rejections)


# --- Telegram Desktop export -------------------------------------------------------------------------


def _export(messages, **chat) -> bytes:
    document = {"name": "Chan", "type": "public_channel", "id": CHANNEL, **chat, "messages": messages}
    return json.dumps(document, ensure_ascii=False).encode()


def test_export_message_uses_date_unixtime_and_text_parts():
    message = {
        "id": 42, "type": "message", "date": "2024-03-01T15:30:00", "date_unixtime": "1709294400",
        "edited": "2024-03-01T16:30:00", "edited_unixtime": "1709298000",
        "from": "Chan", "from_id": f"channel{CHANNEL}", "author": "Editor",
        "text": ["سلام 😀 ", {"type": "hashtag", "text": "#خبر_فوري"}, " ", {"type": "mention", "text": "@Some_One"},
                 " ", {"type": "text_link", "text": "لینک", "href": "https://example.com/linked"}],
        "photo": "photos/photo_1.jpg", "photo_file_size": 12345, "width": 800, "height": 600,
        "reactions": [{"type": "emoji", "count": 5, "emoji": "👍"}, {"type": "custom_emoji", "count": 1,
                                                                      "document_id": "77"}],
    }  # fmt: skip
    records, rejections = run("telegram-export", _export([message]))
    assert rejections == []
    (record,) = records
    assert record.key == f"telegram:{CHANNEL}:42"
    assert record.created_at == WHEN  # 1709294400, not the exporter's local 15:30
    assert record.edited_at == datetime(2024, 3, 1, 13, tzinfo=timezone.utc)
    assert record.text == "سلام 😀 #خبر_فوري @Some_One لینک"
    assert record.hashtags == ["خبر_فوری"] and record.mentions == ["some_one"]
    assert record.urls == ["https://example.com/linked"]
    assert record.author_id == str(CHANNEL) and record.kind == "post"
    assert record.metrics.reactions == {"👍": 5, "custom:77": 1}
    assert record.media[0].url == "photos/photo_1.jpg" and record.media[0].size == 12345
    assert record.metadata["post_author"] == "Editor"
    assert record.provenance.format == "telegram-export" and record.provenance.raw_line == 1


def test_same_message_same_key_from_telethon_and_export():
    telethon = _message(id=42, message="hello there friends").to_json()
    export = {"id": 42, "type": "message", "date": "2024-03-01T15:30:00", "date_unixtime": "1709294400",
              "from": "Chan", "from_id": f"channel{CHANNEL}", "text": "hello there friends"}  # fmt: skip
    (api_record,), _ = run("telegram", lines(telethon))
    (export_record,), _ = run("telegram-export", _export([export]))
    assert api_record.key == export_record.key == f"telegram:{CHANNEL}:42"
    assert api_record.created_at == export_record.created_at
    # Bot-API style ids (-100...) unwrap to the same bare id.
    (bot_style,), _ = run("telegram-export", _export([export], id=int(f"-100{CHANNEL}")))
    assert bot_style.key == api_record.key


def test_export_service_messages_missing_unixtime_and_group_senders():
    messages = [
        {"id": 1, "type": "service", "date": "2024-03-01T10:00:00", "date_unixtime": "1709287200",
         "actor": "Chan", "actor_id": f"channel{CHANNEL}", "action": "create_channel", "text": ""},
        {"id": 2, "type": "message", "date": "2024-03-01T10:00:00", "text": "no instant"},
        {"id": 3, "type": "message", "date_unixtime": "1709287300", "from": "Sara", "from_id": "user5678",
         "reply_to_message_id": 2, "forwarded_from": "Other channel", "text": "a reply",
         "file": "(File not included. Change data exporting settings to download.)", "media_type": "voice_message",
         "mime_type": "audio/ogg", "duration_seconds": 4},
        "junk",
    ]  # fmt: skip
    records, rejections = run("telegram-export", _export(messages, type="private_supergroup"))
    assert [(r.line, r.reason.split(":")[0].split(" (")[0], r.error) for r in rejections] == [
        (1, "service message", False), (2, "field 'date_unixtime' missing", True),
        (4, "message is not a JSON object", True)]  # fmt: skip
    (record,) = records
    assert record.author_id == "5678" and record.kind == "repost"
    assert record.reply_to == f"telegram:{CHANNEL}:2"
    assert record.media[0].type == "voice" and record.media[0].url is None and record.media[0].duration == 4
    assert record.metadata["forwarded_from"] == "Other channel"


def test_full_export_with_chats_list():
    chat_a = {"name": "A", "type": "public_channel", "id": 111, "messages": [
        {"id": 1, "type": "message", "date_unixtime": "1709287200", "text": "first chat"}]}
    chat_b = {"name": "B", "type": "personal_chat", "id": 222, "messages": [
        {"id": 1, "type": "message", "date_unixtime": "1709287200", "from_id": "user222", "text": "second chat"}]}
    document = {"about": "x", "chats": {"about": "y", "list": [chat_a, chat_b]}}
    records, rejections = run("telegram-export", json.dumps(document).encode())
    assert rejections == []
    assert [r.key for r in records] == ["telegram:111:1", "telegram:222:1"]
    assert [r.metadata["chat_name"] for r in records] == ["A", "B"]


@pytest.mark.parametrize("payload", [b"", b"{}", b"[1,2]", b'{"messages": 5}', b'{"name": "x", "messages": ['])
def test_export_that_is_not_an_export_is_reported(payload):
    records, rejections = run("telegram-export", payload)
    assert records == [] and len(rejections) == 1


def test_sample_export_golden():
    records, rejections = run("telegram-export", (SAMPLES / "telegram_export" / "result.json").read_bytes())
    assert all(isinstance(r, Record) for r in records)
    assert len(records) == 195
    assert [(r.reason, r.error) for r in rejections] == [("service message", False)] * 5
    assert len({r.key for r in records}) == len(records)
    kinds = {r.kind for r in records}
    assert kinds == {"post", "reply", "repost"}
    edited = [r for r in records if r.edited_at]
    assert [r.native_id for r in edited] == ["7"]
    assert {r.lang for r in records} == {"fa", "ar", "en"}
    assert any(r.media and r.media[0].type == "video" for r in records)
    assert any("لینک" in r.text and r.urls for r in records)
    assert all(r.text_clean == r.text_clean.strip() and "ـ" not in r.text_clean for r in records)


def test_export_of_an_empty_chat_is_not_an_error():
    records, rejections = run("telegram-export", _export([]))
    assert records == [] and rejections == []
