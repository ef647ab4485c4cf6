"""Erasure by id in Telegram Desktop exports of September 2020 to April 2021, which spell a sender as a shifted
peer id (``2**32 | user``, ``2**33 | channel``): the bare id the records carry finds them, and a current
export's large user id that happens to equal a shifted spelling is someone else."""

from __future__ import annotations

import gzip
import io

import orjson

from crawl_assets.erasure import Selector, erase
from crawl_assets.erasure.authors import Author
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
from crawl_assets_tests.normalize.shapes import (
    SHIFT_CHAT, SHIFT_USER, export_message, tdesktop_2020_message, tdesktop_chat,
)  # fmt: skip

USER, CHANNEL, GROUP = 777000111, 1447061072, 1147061072


def _old_group_export() -> bytes:
    """A supergroup's export by Telegram Desktop 2.5 (January 2021): chat, senders and the replied peer shifted."""
    return tdesktop_chat(
        SHIFT_CHAT + GROUP, "public_supergroup",
        {"id": 4, "type": "service", "date": "2021-01-10T09:59:00", "actor": "Reza", "actor_id": SHIFT_USER + USER,
         "action": "join_group_by_link", "inviter": "Sample Chat", "text": ""},  # no record: only the person matches it
        tdesktop_2020_message(5, "my phone is 0912 000 0000", "2021-01-10T10:00:00", **{"from": "Reza"},
                              from_id=SHIFT_USER + USER, reply_to_message_id=100, reply_to_peer_id=SHIFT_CHAT + CHANNEL),
        tdesktop_2020_message(6, "thanks", "2021-01-10T10:01:00", **{"from": "Sample Channel"},
                              from_id=SHIFT_CHAT + CHANNEL, reply_to_message_id=5),
        tdesktop_2020_message(8, "a message with a broken date", "2021-13-40T10:03:00",  # rejected: no record either
                              from_id=SHIFT_USER + USER),
        tdesktop_2020_message(7, "welcome", "2021-01-10T10:02:00", **{"from": "Mina"}, from_id=SHIFT_USER + 4242),
        name="Sample Chat")  # fmt: skip


def _lake_with(tmp_path, *exports: tuple[str, bytes, dict]) -> Lake:
    lake = Lake(str(tmp_path / "lake"))
    for n, (source, data, options) in enumerate(exports):
        batch = lake.write_raw_batch(tenant="acme", platform="telegram", source=source, fmt="telegram-export",
                                     method="export", batch_id=f"2026010{n + 5}T100000000000Z-r{n}-0000",
                                     run_id=f"r{n}", stream=io.BytesIO(data), extra={"normalize": options})
        normalize_batch(lake, batch, lake.table_part(TABLE, "acme", "telegram", source, batch.manifest.batch_id))
    return lake


def _keys(lake: Lake) -> set[str]:
    return {r["key"] for _, t in lake.read_parts(TABLE, "acme", "telegram", "acme.telegram.old")
            for r in arrow_to_records(t)} | {r["key"] for _, t in lake.read_parts(TABLE, "acme", "telegram",
                                                                                    "acme.telegram.new")
                                             for r in arrow_to_records(t)}


def _raw(lake: Lake, source: str) -> bytes:
    return b"".join(gzip.decompress(lake.fs.cat(p)) for p in lake.fs.glob(lake.path(f"raw/acme/telegram/{source}/*.gz")))


def test_erasing_a_user_by_bare_id_finds_them_in_an_old_export(tmp_path):
    # A current export of another chat whose member's id equals the user's shifted spelling: not the same person.
    namesake = tdesktop_chat(99, "private_group", export_message(1, "hi all", from_id=f"user{SHIFT_USER + USER}"),
                             name="Other")
    lake = _lake_with(tmp_path, ("acme.telegram.old", _old_group_export(), {"timezone": "UTC"}),
                      ("acme.telegram.new", namesake, {}))
    assert _keys(lake) == {f"telegram:{GROUP}:5", f"telegram:{GROUP}:6", f"telegram:{GROUP}:7", "telegram:99:1"}

    report = erase(lake, None, Selector(tenant="acme", author=Author("telegram", str(USER))), lock_wait_seconds=5)

    assert report.records == 1
    assert _keys(lake) == {f"telegram:{GROUP}:6", f"telegram:{GROUP}:7", "telegram:99:1"}
    raw = _raw(lake, "acme.telegram.old")
    assert b"0912" not in raw and b"Reza" not in raw and b"broken date" not in raw
    assert str(SHIFT_USER + USER).encode() not in raw
    assert str(SHIFT_USER + USER).encode() in _raw(lake, "acme.telegram.new"), "the namesake's message is kept"


def test_erasing_a_channel_by_bare_id_finds_its_posts_in_an_old_export(tmp_path):
    lake = _lake_with(tmp_path, ("acme.telegram.old", _old_group_export(), {"timezone": "UTC"}))

    report = erase(lake, None, Selector(tenant="acme", author=Author("telegram", str(CHANNEL))), lock_wait_seconds=5)

    assert report.records == 1
    assert _keys(lake) == {f"telegram:{GROUP}:5", f"telegram:{GROUP}:7"}
    doc = orjson.loads(_raw(lake, "acme.telegram.old"))
    assert [m["id"] for m in doc["messages"]] == [4, 5, 8, 7]
