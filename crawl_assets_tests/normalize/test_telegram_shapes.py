"""Telegram inputs of several years (issue 14 items 10 and 11, issue 29 item 2): Desktop exports made before
``date_unixtime`` existed or with shifted peer ids, and Telethon JSON written by older Telethon versions."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from crawl_assets.cli.normalize import normalize
from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.registry.store import Registry
from crawl_assets.sources.export_file.collect import ingest_export_file
from crawl_assets.sdk.errors import PauseSource
from crawl_assets.sdk.exports import tenant_import_root
from crawl_assets_tests.normalize.helpers import CONTEXT, run
from crawl_assets_tests.normalize.shapes import (
    SHIFT_CHAT, SHIFT_USER, export_file, export_message, lines, tdesktop_2019_message, tdesktop_2020_message,
    tdesktop_chat, telethon_message,
)  # fmt: skip
from crawl_assets_tests.pipeline.lake_normalize import materialize_normalized

BERLIN = dataclasses.replace(CONTEXT, timezone="Europe/Berlin")


def _old_export() -> bytes:
    """An export as Telegram Desktop wrote it in 2019: no unix times, the sender as a bare number."""
    return export_file(
        export_message(10, "Guten Morgen aus Berlin", unixtime=None, date="2019-05-01T12:34:56",
                       from_id=123456, **{"from": "Anna"}),
        export_message(11, "Korrigierte Nachricht", unixtime=None, date="2019-12-01T09:00:00",
                       edited="2019-12-01T09:05:00", from_id=123456, **{"from": "Anna"}),
    )  # fmt: skip


def test_export_without_unix_times_needs_and_uses_the_timezone():
    records, rejections = run("telegram-export", _old_export())
    assert not records and len(rejections) == 2
    assert "options" in rejections[0].reason and "timezone: Asia/Tehran" in rejections[0].reason
    assert "--timezone" in rejections[0].reason and "'date_unixtime' missing" in rejections[0].reason
    records, rejections = run("telegram-export", _old_export(), BERLIN)
    assert not rejections
    summer, winter = records
    assert summer.created_at == datetime(2019, 5, 1, 10, 34, 56, tzinfo=timezone.utc)  # CEST, UTC+2
    assert winter.created_at == datetime(2019, 12, 1, 8, 0, tzinfo=timezone.utc)  # CET, UTC+1
    assert winter.edited_at == datetime(2019, 12, 1, 8, 5, tzinfo=timezone.utc)
    assert summer.provenance.flags == ["local_time_converted"]
    assert summer.metadata["export_timezone"] == "Europe/Berlin"
    assert summer.author_id == "123456", "a numeric from_id (exports before 2021) is the sender's user id"


def test_unix_times_win_and_are_not_flagged():
    records, _ = run("telegram-export", export_file(export_message(2, "now", unixtime=1714548780)), BERLIN)
    assert records[0].provenance.flags == [] and "export_timezone" not in records[0].metadata


def test_cli_timezone_flag(tmp_path):
    path = tmp_path / "result.json"
    path.write_bytes(_old_export())
    ok = CliRunner().invoke(normalize, ["--format", "telegram-export", "--timezone", "Europe/Berlin", str(path)])
    assert ok.exit_code == 0 and "2 records" in ok.stderr
    bad = CliRunner().invoke(normalize, ["--format", "telegram-export", "--timezone", "Mars/Base", str(path)])
    assert bad.exit_code == 2 and "unknown time zone 'Mars/Base'" in bad.stderr and "--timezone" in bad.stderr


def test_pipeline_export_source_timezone_option(tmp_path):
    (acme := tenant_import_root("acme")).mkdir(parents=True)
    (acme / "result.json").write_bytes(_old_export())
    registry = Registry(path=tmp_path / "sources.yaml")
    lake = Lake(str(tmp_path / "lake"))
    entry = SourceEntry(name="old", tenant="acme", platform="telegram", kind="export_file", identifier="result.json")
    first = ingest_export_file(entry, registry, lake, "run1")
    assert first.batch is not None and "normalize" not in first.batch.manifest.extra
    zoned = entry.model_copy(update={"options": {"timezone": "Europe/Berlin"}})
    again = ingest_export_file(zoned, registry, lake, "run2")
    assert again.batch is not None, "same file, new normalization options: stored again to be read with them"
    assert again.batch.manifest.extra["normalize"] == {"timezone": "Europe/Berlin"}
    assert ingest_export_file(zoned, registry, lake, "run3").batch is None
    metadata = materialize_normalized(tmp_path / "lake", "telegram", entry.key)
    assert metadata["records_written"] == 2 and metadata["rejected"] == 2  # the first batch: no timezone then
    with pytest.raises(PauseSource, match="options.timezone: unknown time zone"):
        ingest_export_file(entry.model_copy(update={"options": {"timezone": "Nowhere/Land"}}), registry, lake, "r4")


def test_unsupported_export_message_is_counted_not_an_error():
    _, rejections = run("telegram-export", export_file({"id": 5, "type": "unsupported"}, export_message(6, "ok")))
    assert [(r.line, r.error) for r in rejections] == [(1, False)]


# --- Telethon JSON across versions --------------------------------------------------------------


def test_old_reaction_shape_counts_like_the_current_one():
    old = {"_": "MessageReactions", "min": False, "can_see_list": False, "results": [
        {"_": "ReactionCount", "reaction": "🔥", "count": 5, "chosen": False},
        {"_": "ReactionCount", "reaction": "👍", "count": 2, "chosen": True}]}
    new = {"_": "MessageReactions", "min": False, "can_see_list": False, "results": [
        {"_": "ReactionCount", "reaction": {"_": "ReactionEmoji", "emoticon": "🔥"}, "count": 5, "chosen_order": None},
        {"_": "ReactionCount", "reaction": {"_": "ReactionEmoji", "emoticon": "👍"}, "count": 2, "chosen_order": 1},
        {"_": "ReactionCount", "reaction": {"_": "ReactionCustomEmoji", "document_id": 5368324170671202286},
         "count": 1, "chosen_order": None}], "recent_reactions": []}  # fmt: skip
    records, _ = run("telegram", lines(telethon_message(1, "old", reactions=old), telethon_message(2, "new", reactions=new)))
    assert records[0].metrics.reactions == {"🔥": 5, "👍": 2}
    assert records[1].metrics.reactions == {"🔥": 5, "👍": 2, "custom:5368324170671202286": 1}


def test_pre_layer_119_message_shape():
    """Telethon before 1.17: to_id, a numeric from_id, reply_to_msg_id on the message, numeric forward ids."""
    old = {"_": "Message", "id": 40, "to_id": {"_": "PeerChannel", "channel_id": 1987654321},
           "date": "2019-03-01T10:00:00+00:00", "message": "forwarded reply", "out": False, "mentioned": False,
           "media_unread": False, "silent": False, "post": False, "from_id": 777, "reply_to_msg_id": 39,
           "fwd_from": {"_": "MessageFwdHeader", "date": "2019-02-28T08:00:00+00:00", "from_id": None,
                        "channel_id": 1111111111, "channel_post": 12, "post_author": None},
           "views": 10, "entities": []}  # fmt: skip
    records, rejections = run("telegram", lines(old))
    assert not rejections
    (record,) = records
    assert record.key == "telegram:1987654321:40" and record.author_id == "777"
    assert record.reply_to == "telegram:1987654321:39" and record.repost_of == "telegram:1111111111:12"


def test_naive_dates_of_very_old_telethon_are_utc():
    records, _ = run("telegram", lines(telethon_message(3, "old date", date="2018-06-01T10:00:00")))
    assert records[0].created_at == datetime(2018, 6, 1, 10, 0, tzinfo=timezone.utc)


def test_progressive_photo_size_gives_the_bytes():
    photo = {"_": "MessageMediaPhoto", "spoiler": False, "photo": {"_": "Photo", "id": 5, "sizes": [
        {"_": "PhotoStrippedSize", "type": "i", "bytes": "AQID"},
        {"_": "PhotoSizeProgressive", "type": "y", "w": 1280, "h": 720, "sizes": [8000, 30000, 91000]}]}}
    records, _ = run("telegram", lines(telethon_message(4, "", media=photo)))
    assert (records[0].media[0].width, records[0].media[0].size) == (1280, 91000)


CHANNEL, GROUP, USER = 1447061072, 1147061072, 777000111  # bare ids (31-bit, as every id was before 2021)
UTC = dataclasses.replace(CONTEXT, timezone="UTC")


def _joins(records) -> list[tuple]:
    return sorted((r.key, r.reply_to, r.author_id) for r in records)


def _channel_exports() -> dict[str, bytes]:
    """One channel (a post and a reply to it) as four exporters wrote it."""
    shifted = SHIFT_CHAT + CHANNEL  # 10036995664
    return {
        "2019": tdesktop_chat(shifted, "public_channel", tdesktop_2019_message(100, "Launch day", "2019-05-01T12:00:00"),
                              tdesktop_2019_message(101, "Update: fixed", "2019-05-01T13:00:00", reply_to_message_id=100)),
        "2020": tdesktop_chat(shifted, "public_channel",
                              tdesktop_2020_message(100, "Launch day", "2020-11-01T12:00:00", **{"from": "Sample Channel"},
                                                    from_id=shifted),
                              tdesktop_2020_message(101, "Update: fixed", "2020-11-01T13:00:00", from_id=shifted,
                                                    reply_to_message_id=100, **{"from": "Sample Channel"})),
        "current": tdesktop_chat(CHANNEL, "public_channel",
                                 export_message(100, "Launch day", from_id=f"channel{CHANNEL}"),
                                 export_message(101, "Update: fixed", from_id=f"channel{CHANNEL}", reply_to_message_id=100)),
    }  # fmt: skip


def test_old_and_new_exports_and_telethon_join_on_the_same_keys():
    """Issue 29 item 2: exports before April 2021 shift chat and sender ids (2**33 + id for a channel)."""
    peer = {"_": "PeerChannel", "channel_id": CHANNEL}
    telethon = lines(telethon_message(100, "Launch day", peer_id=peer),
                     telethon_message(101, "Update: fixed", peer_id=peer, reply_to={
                         "_": "MessageReplyHeader", "reply_to_msg_id": 100, "reply_to_peer_id": None, "reply_to_top_id": None}))
    expected = _joins(run("telegram", telethon)[0])
    assert expected == [(f"telegram:{CHANNEL}:100", None, str(CHANNEL)),
                        (f"telegram:{CHANNEL}:101", f"telegram:{CHANNEL}:100", str(CHANNEL))]
    for era, payload in _channel_exports().items():
        records, rejections = run("telegram-export", payload, UTC)
        assert not rejections, era
        assert _joins(records) == expected, era


def test_old_group_export_senders_and_cross_chat_replies_use_bare_ids():
    message = tdesktop_2020_message(5, "see the post", "2021-01-10T10:00:00", **{"from": "Reza"}, from_id=SHIFT_USER + USER,
                                    reply_to_message_id=100, reply_to_peer_id=SHIFT_CHAT + CHANNEL)
    older = tdesktop_2019_message(4, "hello", "2020-03-01T10:00:00", **{"from": "Reza"}, from_id=USER)
    records, _ = run("telegram-export", tdesktop_chat(SHIFT_CHAT + GROUP, "public_supergroup", older, message), UTC)
    assert _joins(records) == [(f"telegram:{GROUP}:4", None, str(USER)),
                               (f"telegram:{GROUP}:5", f"telegram:{CHANNEL}:100", str(USER))]


def test_current_export_ids_stay_as_they_are():
    """A user id beyond 2**32 (normal since 2021) in a current export is not mistaken for a shifted one."""
    big = 5_000_000_123
    chat = tdesktop_chat(big, "personal_chat", export_message(1, "hi", from_id=f"user{big}"), name="Someone")
    records, _ = run("telegram-export", chat)
    assert _joins(records) == [(f"telegram:{big}:1", None, str(big))]


def test_2019_export_epoch_edited_is_no_edit():
    never = tdesktop_2019_message(1, "as sent", "2019-05-01T12:00:00")
    edited = tdesktop_2019_message(2, "fixed", "2019-05-01T12:00:00", edited="2019-05-01T12:10:00")
    records, _ = run("telegram-export", tdesktop_chat(SHIFT_CHAT + CHANNEL, "public_channel", never, edited), UTC)
    assert [r.edited_at for r in records] == [None, datetime(2019, 5, 1, 12, 10, tzinfo=timezone.utc)]


def test_erasure_scope_of_an_old_export_is_the_bare_chat():
    """Erasure matches raw items as ``{chat}:{id}``, like the keys: an old export's chat is its bare id too."""
    from crawl_assets.sources.telegram.normalize import PERSONS

    chat = json.loads(_channel_exports()["2019"])
    assert PERSONS.scope(chat) == str(CHANNEL)
    assert PERSONS.scope(json.loads(_channel_exports()["current"])) == str(CHANNEL)


def test_supergroup_message_is_not_a_channel_post():
    """Issue 29 item 11: a supergroup is a PeerChannel too; its messages are not posts (``post: false``)."""
    from crawl_assets.sources.telegram.rawlines import message_line
    from crawl_assets_tests.standins import telegram_mtproto as tm

    world = tm.World()
    newest = datetime(2025, 1, 1, tzinfo=timezone.utc)
    group = world.channel("devs", messages=5, megagroup=True, newest_at=newest)
    channel = world.channel("news", messages=5, newest_at=newest)
    records, _ = run("telegram", lines(message_line(group.message(3)), message_line(channel.message(3))))
    assert [(r.metadata["chat_type"], r.kind, r.author_id) for r in records] == [
        ("supergroup", "message", str(tm.COMMENTER.id)), ("channel", "post", str(channel.id))]


def test_a_tombstone_takes_its_chat_type_from_the_line_never_a_guess():
    """A deletion line names its chat's type (a PeerChannel is a channel or a supergroup); one written before that
    was noted leaves a channel's unknown, and a type the peer cannot have is a rejection naming the field."""
    def gone(peer: dict, **extra) -> dict:
        return {"_": "crawl_assets.deleted", "peer_id": peer, "id": 7, "observed_at": "2026-11-30T03:30:00+00:00", **extra}

    channel, chat = {"_": "PeerChannel", "channel_id": CHANNEL}, {"_": "PeerChat", "chat_id": GROUP}
    records, rejections = run("telegram", lines(gone(channel, chat_type="supergroup"), gone(channel, chat_type="channel"),
                                                gone(channel), gone(chat), gone(channel, chat_type="user")))
    assert [(r.metadata.get("chat_type"), r.kind) for r in records] == [
        ("supergroup", "message"), ("channel", "post"), (None, "message"), ("chat", "message")]
    assert [r.line for r in rejections] == [5] and "'chat_type'" in rejections[0].reason
