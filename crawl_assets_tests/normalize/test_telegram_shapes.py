"""Telegram inputs of several years (issue 14 items 10 and 11): Desktop exports made before
``date_unixtime`` existed, and Telethon JSON written by older Telethon versions."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone

import dagster as dg
import pytest
from click.testing import CliRunner

from crawl_assets.cli.normalize import normalize
from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.registry.store import Registry
from crawl_assets.orchestration.raw_export import ingest_export_file
from crawl_assets.sources.exports import tenant_import_root
from crawl_assets_tests.normalize.helpers import CONTEXT, run
from crawl_assets_tests.normalize.shapes import export_file, export_message, lines, telethon_message
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
    with pytest.raises(dg.Failure, match="options.timezone: unknown time zone"):
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
