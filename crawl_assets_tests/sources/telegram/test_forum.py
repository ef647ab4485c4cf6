"""Forum supergroups: every message carries its topic (id, key, title), topic creations and renames are records
and keep the titles current, from the raw lines (Telethon's TL shapes, our own fixtures) to the collector
reading a forum from the MTProto stand-in."""

from __future__ import annotations

import io
from datetime import datetime, timezone

from telethon.tl import types

from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.schema.record import Record
from crawl_assets.sources.telegram.normalize import normalize_telethon
from crawl_assets.sources.telegram.rawlines import message_line
from crawl_assets_tests.sources.telegram.conftest import entry
from crawl_assets_tests.standins import telegram_mtproto as tm

CHAT = 1_700_000_001
WHEN = datetime(2026, 5, 1, 9, 30, tzinfo=timezone.utc)
PEER = types.PeerChannel(CHAT)
USER = types.PeerUser(42)


def msg(i: int, text: str, reply: types.MessageReplyHeader | None = None) -> types.Message:
    return types.Message(id=i, peer_id=PEER, date=WHEN, message=text, from_id=USER, reply_to=reply)


def service(i: int, action, reply: types.MessageReplyHeader | None = None) -> types.MessageService:
    return types.MessageService(id=i, peer_id=PEER, date=WHEN, action=action, from_id=USER, reply_to=reply)


def records(objects, topics: dict[str, str] | None = None) -> dict[int, Record]:
    stream = io.BytesIO(b"\n".join(message_line(o) for o in objects) + b"\n")
    items = list(normalize_telethon(stream, name="forum.jsonl", context=NormalizeContext(method="api", topics=topics)))
    out = {}
    for item in items:
        assert isinstance(item, Record), item
        out[int(item.native_id)] = item
    return out


def test_each_forum_message_carries_its_topic_and_replies_stay_replies():
    lines = [
        service(5, types.MessageActionTopicCreate(title="اخبار روز", icon_color=0x6FB9F0)),
        msg(6, "first in the topic", types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=5)),
        msg(7, "an answer", types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=6, reply_to_top_id=5)),
        msg(8, "in General"),
        service(9, types.MessageActionTopicEdit(title="اخبار"), types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=5)),
        service(10, types.MessageActionTopicEdit(closed=True), types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=5)),
    ]
    topics = {f"{CHAT}:5": "اخبار", f"{CHAT}:1": "General"}  # what the collector knew when it stored the batch
    got = records(lines, topics)
    topic_key = f"telegram:{CHAT}:5"
    created, first, answer, general, renamed, closed = (got[i] for i in (5, 6, 7, 8, 9, 10))

    assert (created.kind, created.key, created.text, created.conversation_id) == ("topic", topic_key, "اخبار روز", topic_key)
    assert created.metadata["topic_id"] == 5 and created.metadata["topic_title"] == "اخبار روز"  # its own title then
    # a message in a topic is not a reply to the topic; a reply inside it is, and both belong to the topic
    assert (first.kind, first.reply_to, first.conversation_id) == ("message", None, topic_key)
    assert (answer.kind, answer.reply_to, answer.conversation_id) == ("reply", f"telegram:{CHAT}:6", topic_key)
    for record in (first, answer):
        assert {k: record.metadata[k] for k in ("topic_id", "topic", "topic_title")} == {
            "topic_id": 5, "topic": topic_key, "topic_title": "اخبار"}
    assert general.metadata["topic_id"] == 1 and general.metadata["topic_title"] == "General"
    assert general.conversation_id == general.key  # General is no thread of its own
    assert (renamed.kind, renamed.text, renamed.metadata["topic_title"]) == ("topic_edit", "اخبار", "اخبار")
    assert (closed.kind, closed.text, closed.metadata["topic_closed"], closed.metadata["topic_title"]) == (
        "topic_edit", "", True, "اخبار")


def test_outside_forums_nothing_changes_and_a_topic_without_a_known_title_keeps_its_id():
    plain = records([msg(3, "hi", types.MessageReplyHeader(reply_to_msg_id=2)), msg(4, "plain")])
    assert plain[3].kind == "reply" and plain[3].reply_to == f"telegram:{CHAT}:2"
    assert not any(k.startswith("topic") for r in plain.values() for k in r.metadata)
    untitled = records([msg(12, "x", types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=11))])[12]
    assert untitled.metadata["topic_id"] == 11 and "topic_title" not in untitled.metadata


def test_a_synced_forum_gives_every_batch_the_titles_of_its_topics(world, harness_factory):
    chat = world.channel("forum_fa", messages=400, megagroup=True)
    chat.add_topic(120, "اخبار")
    chat.add_topic(260, "Questions")
    chat.edit_topic(120, "اخبار روز")  # a rename at the top (message 401)
    h = harness_factory(entry("forum", "@forum_fa"))
    h.sync()

    assert world.counts["GetForumTopicsRequest"] == 1  # read with the chat's metadata
    batches = [b for b in h.lake.raw_batches("default", "telegram", h.source.key) if b.manifest.items]
    assert batches and all("topics" in b.manifest.extra["normalize"] for b in batches)
    titles = {}
    for b in batches:
        titles.update(b.manifest.extra["normalize"]["topics"])
    assert titles == {f"{chat.id}:1": "General", f"{chat.id}:120": "اخبار روز", f"{chat.id}:260": "Questions"}
    assert world.counts["GetForumTopicsByIDRequest"] == 0  # every title was known already
    # between syncs a topic appears whose creation message is gone: its title is asked for by id
    world.counts.clear()
    (topic,) = chat.post(1)
    chat.add_topic(topic, "تازه")
    chat.post(30)
    chat.delete(topic)
    h.sync()
    assert world.counts["GetForumTopicsByIDRequest"] == 1 and world.counts["GetForumTopicsRequest"] == 0
    newest = [b for b in h.lake.raw_batches("default", "telegram", h.source.key) if b.manifest.items][-1]
    assert newest.manifest.extra["normalize"]["topics"][f"{chat.id}:{topic}"] == "تازه"


def test_a_rename_read_in_history_never_replaces_a_newer_title(world, harness_factory):
    chat = world.channel("renames", messages=600, megagroup=True)
    chat.add_topic(50, "v1")
    chat.topic_edits[300] = (50, "v2")  # an old rename, deep in the history
    chat.topics[50] = "v3"  # the title now
    h = harness_factory(entry("renames", "@renames", refresh_window=100), max_pages_per_run=2)
    for _ in range(10):  # a page of history per run: the rename is met long after the title was read
        if h.sync().state["history_complete"]:
            break
    assert h.state["history_complete"] and len(h.checkpoints) > 6
    batches = [b for b in h.lake.raw_batches("default", "telegram", h.source.key) if b.manifest.items]
    assert {b.manifest.extra["normalize"]["topics"].get(f"{chat.id}:50") for b in batches} - {None} == {"v3"}
