"""Hydration of Telegram ids (``sources/telegram/hydrate.py``) against the MTProto stand-in: a release made with
``--dehydrate telegram`` re-fetched by ``channels.getMessages`` gives the same records minus the messages deleted
since (``MessageEmpty``: ``not_found``) and those of a channel gone private (``channel_private``); numeric channel
ids resolve through the account's dialogs; a crash re-asks nothing already stored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crawl_assets import settings
from crawl_assets.lake import Lake
from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
from crawl_assets.pipeline.reader import latest_records
from crawl_assets.registry import SourceEntry
from crawl_assets.release import ReleaseQuery, create_release
from crawl_assets.release.hydration import hydration_report, plan_hydration
from crawl_assets.sdk.errors import PauseSource
from crawl_assets.sdk.sync import CollectEnv
from crawl_assets.sdk.exports import tenant_import_root
from crawl_assets.sources.telegram.collect import collect
from crawl_assets.sources.telegram.hydrate import split_pair
from crawl_assets.sources.telegram.resource import TelegramCredential, TelegramResource
from crawl_assets.sdk.tenant_secrets import credential_key
from crawl_assets_tests.fakes import FAKE_API_HASH
from crawl_assets_tests.sources.telegram.conftest import entry
from crawl_assets_tests.sources.test_plain_collector import Log, MemoryCheckpointer
from crawl_assets_tests.standins import telegram_mtproto as tm

PER_OBSERVATION = ("tenant", "source", "provenance")


@pytest.fixture
def tg_world():
    w = tm.World()
    tm.use(w)
    yield w
    tm.release()


def _resource(tmp_path, tenant: str) -> TelegramResource:
    cred = TelegramCredential(api_id="12345", api_hash=FAKE_API_HASH, session=tm.session_for("default"))
    return TelegramResource(credentials={credential_key(tenant, None): cred}, request_interval_seconds=0.0,
                            network_backoff_seconds=0.01, account_wait_seconds=1.0, lock_dir=str(tmp_path / "locks"))


def _sync(lake, resource, source, checkpointer):
    collected = collect(resource, source, CollectEnv(lake, "run-1", checkpointer, Log()))
    for batch in collected.batches:
        normalize_batch(lake, batch, lake.table_part(TABLE, source.tenant, "telegram", source.key,
                                                      batch.manifest.batch_id))
    return collected


@pytest.fixture
def released(tg_world, tmp_path):
    """Tenant ``default`` synced two channels; its release lists them as ids only, copied to tenant ``lab``."""
    lake = Lake(settings.lake_root())
    news, closed = tg_world.channel("news", messages=130), tg_world.channel("closed_room", messages=12)
    for name, ident in (("news", "@news"), ("closed", "@closed_room")):
        _sync(lake, _resource(tmp_path, "default"), entry(name, ident), MemoryCheckpointer({}))
    summary = create_release(lake, ReleaseQuery("default", dehydrate=("telegram",)), "tg")
    (lab := tenant_import_root("lab")).mkdir(parents=True)
    shutil.copytree(summary.path, lab / "tg")
    source = SourceEntry(name=f"hydrate-{summary.release_id}", tenant="lab", platform="telegram", kind="id_list",
                         identifier="tg/ids.jsonl")
    return lake, news, closed, summary, source


def test_a_dehydrated_telegram_release_hydrates_to_the_same_messages_minus_the_gone_each_with_its_reason(
        tg_world, released, tmp_path):
    lake, news, closed, summary, source = released
    original = {r["key"]: r for r in latest_records("default")}
    listed = (summary.path / "ids.jsonl").read_text().splitlines()
    assert len(listed) == len(original) and not (summary.path / "records.jsonl").read_text()  # ids only
    in_news = sorted(int(k.rsplit(":", 1)[1]) for k in original if k.startswith(f"telegram:{news.id}:"))
    assert 100 < len(in_news) <= 200
    news.delete(in_news[3], in_news[77])
    closed.private = True
    tg_world.counts.clear()
    collected = _sync(lake, _resource(tmp_path, "lab"), source, MemoryCheckpointer({}))
    # news's ids: two requests (100 a request); the closed channel's none: the account's dialogs (read once, the
    # ids being numeric) list it as forbidden
    assert tg_world.counts["GetMessagesRequest"] == 2 and tg_world.counts["GetDialogsRequest"] == 1
    meta = collected.metadata
    private = {k for k in original if k.startswith(f"telegram:{closed.id}:")}
    found = len(original) - 2 - len(private)
    assert (meta["ids_found"], meta["gone_not_found"], meta["gone_channel_private"]) == (found, 2, len(private))

    hydrated = {r["key"]: r for r in latest_records("lab", source=source.key)}
    assert set(hydrated) == set(original)
    gone = {f"telegram:{news.id}:{in_news[3]}", f"telegram:{news.id}:{in_news[77]}"}
    for key in set(original) - gone - private:
        assert {k: v for k, v in hydrated[key].items() if k not in PER_OBSERVATION} == \
               {k: v for k, v in original[key].items() if k not in PER_OBSERVATION}, key
    assert all(hydrated[k]["deleted"] and hydrated[k]["metadata"]["unavailable"] == "not_found" for k in gone)
    assert all(not hydrated[k]["deleted"] and hydrated[k]["metadata"]["unavailable"] == "channel_private"
               for k in private)

    report = hydration_report(lake, "lab", plan_hydration(tenant_import_root("lab") / "tg"))
    assert (report["found"], report["gone"], report["pending"]) == (found, 2 + len(private), 0)
    assert report["reasons"] == {"gone:channel_private": len(private), "gone:not_found": 2}


def test_a_crash_mid_telegram_hydration_reasks_nothing_stored(tg_world, released, tmp_path):
    lake, _, _, summary, source = released
    resource = _resource(tmp_path, "lab").model_copy(update={"pages_per_checkpoint": 1})
    checkpoints = MemoryCheckpointer({})
    tg_world.fail("GetMessagesRequest", "CHANNEL_INVALID", code=400, after=1)  # the second request is refused
    with pytest.raises(PauseSource):
        _sync(lake, resource, source, checkpoints)
    chunks = _requests_for(summary.path / "ids.jsonl")
    assert len(chunks) == 3 and checkpoints.saved[-1]["next"] == chunks[0]  # the first answer was stored
    tg_world.counts.clear()
    _sync(lake, resource, source, checkpoints)
    assert tg_world.counts["GetMessagesRequest"] == 2 and checkpoints.saved[-1]["next"] == sum(chunks)


def _requests_for(ids: Path) -> list[int]:
    """How many ids each request asks: runs of one channel in the list's order, at most 100 a request."""
    channels = [json.loads(line)["key"].split(":")[1] for line in ids.read_text().splitlines()]
    sizes: list[int] = []
    for i, channel in enumerate(channels):
        if i and channel == channels[i - 1] and sizes[-1] < 100:
            sizes[-1] += 1
        else:
            sizes.append(1)
    return sizes


def test_channel_message_pairs():
    assert split_pair("@News_room:5") == ("news_room", 5) and split_pair("-1001234567:9") == ("1234567", 9)
    assert split_pair("1234567:9") == ("1234567", 9)
    assert [split_pair(t) for t in ("news_room:0", "news_room:x", "news:5", "news_room", "ne/ws_room:5", "news_room:99999999999")] == [None] * 6


def test_a_plain_list_by_username_names_what_it_cannot_key(tg_world, tmp_path):
    news, closed = tg_world.channel("news_room", messages=20), tg_world.channel("closed_room", messages=5, private=True)
    (root := tenant_import_root("lab")).mkdir(parents=True)
    (root / "ids.txt").write_text("@news_room:5\nnews_room:6\n@nobody_here:3\nclosed_room:2\nnot a pair\n")
    source = SourceEntry(name="list", tenant="lab", platform="telegram", kind="id_list", identifier="ids.txt")
    lake = Lake(settings.lake_root())
    meta = _sync(lake, _resource(tmp_path, "lab"), source, MemoryCheckpointer({})).metadata
    assert (meta["ids_found"], meta["gone_channel_private"], meta["ids_unresolved"]) == (2, 1, 1)
    assert meta["ids_unresolved_list"] == "nobody_here:3" and meta["ids_refused_lines"] == \
        "line 5: not a CHANNEL:MESSAGE pair: 'not a pair'"
    records = {r["key"]: r for r in latest_records("lab")}
    assert set(records) == {f"telegram:{news.id}:5", f"telegram:{news.id}:6", f"telegram:{closed.id}:2"}
    assert records[f"telegram:{closed.id}:2"]["metadata"]["unavailable"] == "channel_private"


def test_a_missing_telegram_id_list_pauses_the_source(tg_world, tmp_path):
    tenant_import_root("lab").mkdir(parents=True)
    source = SourceEntry(name="list", tenant="lab", platform="telegram", kind="id_list", identifier="gone.txt")
    with pytest.raises(PauseSource, match="cannot be opened"):
        _sync(Lake(settings.lake_root()), _resource(tmp_path, "lab"), source, MemoryCheckpointer({}))
