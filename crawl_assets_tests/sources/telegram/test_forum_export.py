"""Forum topics in Telegram Desktop exports: the export of a forum gives every message the topic fields a
Telethon sync of the same forum gives (issue 36 item 3), from reply ids alone."""

from __future__ import annotations

import json

from telethon.tl import types

from crawl_assets.schema.record import Record
from crawl_assets_tests.normalize.helpers import run
from crawl_assets_tests.normalize.shapes import FORUM_CHAT, export_message, tdesktop_chat, tdesktop_forum
from crawl_assets_tests.sources.telegram.test_forum import CHAT, msg, records, service

TOPIC_FIELDS = ("topic_id", "topic", "topic_title")


def _export() -> tuple[dict[int, Record], list]:
    got, rejections = run("telegram-export", tdesktop_forum())
    return {int(r.native_id): r for r in got}, rejections


def _same_forum_by_telethon() -> dict[int, Record]:
    """The forum of ``tdesktop_forum`` as a Telethon sync reads it (its reply headers name the topics)."""
    def top(replied: int, top_id: int | None = None) -> types.MessageReplyHeader:
        return types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=replied, reply_to_top_id=top_id)

    lines = [
        service(3, types.MessageActionTopicCreate(title="اخبار", icon_color=0x6FB9F0)),
        msg(4, "first in the news topic", top(3)),
        msg(5, "hello, General"),
        service(6, types.MessageActionTopicCreate(title="Questions", icon_color=0x6FB9F0)),
        msg(7, "how do I export?", top(6)),
        msg(8, "Settings, Advanced", top(7, 6)),
        msg(9, "thanks!", top(8, 6)),
        msg(10, "an answer in General", types.MessageReplyHeader(reply_to_msg_id=5)),
        service(11, types.MessageActionTopicEdit(icon_emoji_id=5312536423851630001), top(6)),
        msg(12, "answering a deleted message", top(2, 6)),
        msg(13, "more news", top(3)),
    ]
    known = {f"{CHAT}:1": "General", f"{CHAT}:3": "اخبار", f"{CHAT}:6": "Questions"}  # as the collector reads them
    return records(lines, known)


def _fields(record: Record) -> tuple:
    return (record.key, record.kind, record.text, record.author_id, record.created_at, record.reply_to,
            record.conversation_id, {k: record.metadata.get(k) for k in TOPIC_FIELDS})


def test_an_export_and_a_telethon_sync_of_one_forum_agree_on_every_topic_field():
    assert FORUM_CHAT == CHAT
    exported, rejections = _export()
    synced = _same_forum_by_telethon()
    shared = sorted(set(exported) - {12})  # 12 answers a message the export lacks: its topic is unknown there
    assert shared == [3, 4, 5, 6, 7, 8, 9, 10, 13]
    for native in shared:
        assert _fields(exported[native]) == _fields(synced[native]), native
    topic = f"telegram:{CHAT}:6"
    assert (exported[9].reply_to, exported[9].conversation_id, exported[9].metadata["topic_id"]) == (
        f"telegram:{CHAT}:8", topic, 6)  # the end of a reply chain is still in its topic
    assert exported[5].metadata["topic_title"] == "General" and exported[5].conversation_id == exported[5].key
    # the edit names no topic in an export: counted as a service message, as before
    assert 11 not in exported and [r.reason for r in rejections] == ["service message"]
    assert 11 in synced and synced[11].kind == "topic_edit"


def test_a_reply_to_a_message_not_in_the_export_gets_no_topic_rather_than_a_guess():
    exported, _ = _export()
    orphan = exported[12]
    assert (orphan.kind, orphan.reply_to, orphan.conversation_id) == ("reply", f"telegram:{CHAT}:2", f"telegram:{CHAT}:2")
    assert not any(k.startswith("topic") for k in orphan.metadata)


def test_a_supergroup_without_topic_creations_is_read_as_before():
    chat = json.loads(tdesktop_forum())
    chat["messages"] = [m for m in chat["messages"] if m["type"] == "message"]
    plain, _ = run("telegram-export", json.dumps(chat).encode())
    assert {int(r.native_id): (r.kind, r.reply_to) for r in plain}[4] == ("reply", f"telegram:{CHAT}:3")
    assert not any(k.startswith("topic") for r in plain for k in r.metadata)


def test_topics_are_per_chat_in_a_full_export_and_messages_before_the_first_creation_have_none():
    forum = json.loads(tdesktop_forum())
    forum["messages"].insert(0, export_message(1, "before topics", from_id="user42"))
    other = json.loads(tdesktop_chat(1_700_000_002, "public_supergroup", export_message(3, "x"),
                                     export_message(4, "y", reply_to_message_id=3)))
    full = {"about": "", "chats": {"about": "", "list": [forum, other]}}
    got, _ = run("telegram-export", json.dumps(full, ensure_ascii=False).encode())
    by_key = {r.key: r for r in got}
    assert not any(k.startswith("topic") for k in by_key[f"telegram:{CHAT}:1"].metadata)
    assert by_key[f"telegram:{CHAT}:4"].metadata["topic_id"] == 3
    assert by_key["telegram:1700000002:4"].reply_to == "telegram:1700000002:3"  # topic 3 was the other chat's
    assert not any(k.startswith("topic") for k in by_key["telegram:1700000002:4"].metadata)


def test_a_message_out_of_id_order_or_beyond_64_bits_keeps_its_topic_but_is_not_followed():
    chat = json.loads(tdesktop_forum())
    late = export_message(2**70, "huge id", from_id="user42", reply_to_message_id=3)
    early = export_message(1, "out of order", from_id="user42", reply_to_message_id=3)
    chat["messages"] += [late, early, export_message(14, "answer", from_id="user42", reply_to_message_id=1)]
    got, _ = run("telegram-export", json.dumps(chat, ensure_ascii=False).encode())
    by_id = {int(r.native_id): r for r in got}
    assert by_id[2**70].metadata["topic_id"] == 3 and by_id[1].metadata["topic_id"] == 3
    assert by_id[14].reply_to == f"telegram:{CHAT}:1" and "topic_id" not in by_id[14].metadata
