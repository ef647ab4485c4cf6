"""Discovery with a person in the loop: the chats a tenant's Telegram records name (forwards, t.me links,
mentions) become candidates with counts, first and last seen and the sources that named them, from that tenant's
records alone; ``discover approve`` registers one, and nothing is collected from a candidate before."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone

import dagster as dg
import orjson
import pytest
from click.testing import CliRunner
from telethon.tl import types

from crawl_assets.cli.main import cli
from crawl_assets.definitions import defs
from crawl_assets.lake import Lake
from crawl_assets.lake.layout import discovery_file
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.pipeline import discovery
from crawl_assets.registry import load_registry
from crawl_assets.sources.telegram.discovery import candidate_of, identifier_of, references
from crawl_assets_tests.sources.telegram.conftest import entry as api_entry
from crawl_assets_tests.sources.telegram.web_harness import normalize_all, web_entry, web_harness
from crawl_assets_tests.standins import telegram_mtproto as tm
from crawl_assets_tests.standins.telegram_mtproto.chats import ORIGIN_CHANNEL_ID, TEMPLATES, entities_for
from crawl_assets_tests.standins.telegram_web import TelegramWebStandIn


def _row(key="telegram:1000000001:5", urls=(), mentions=(), metadata=None):
    return {"key": key, "created_at": datetime(2026, 1, 1, tzinfo=timezone.utc), "urls": list(urls),
            "mentions": list(mentions), "metadata": orjson.dumps(metadata or {}).decode()}


def test_what_one_record_names():
    found = list(references(_row(
        urls=["https://t.me/s/Some_Channel/12", "https://t.me/+AbCdEf", "https://t.me/joinchat/xyz",
              "https://t.me/c/1777000001/9", "https://t.me/share/url?url=x", "https://example.com/t.me/fake",
              "https://t.me/helper_bot"],
        mentions=["news_fa", "someone_bot", "x"],
        metadata={"chat_username": "MyChannel", "forwarded_from": {"from_type": "channel", "from_name": "Origin",
                                                                    "from_username": "origin_news", "channel_post": 7}})))
    assert found == [("id:1000000001", "id:1000000001", "self"), ("@mychannel", "@MyChannel", "self"),
                     ("@origin_news", "@origin_news", "forward"), ("@some_channel", "@Some_Channel", "link"),
                     ("id:1777000001", "id:1777000001", "link"), ("@news_fa", "@news_fa", "mention")]
    # the API names a forward's origin by id; a person forwarded from is no candidate
    api = list(references(_row(metadata={"forwarded_from": {"from_type": "channel", "from_id": "1500000001"}})))
    assert api[1:] == [("id:1500000001", "id:1500000001", "forward")]
    person = list(references(_row(metadata={"forwarded_from": {"from_type": "user", "from_id": "42"}})))
    assert person[1:] == []
    # a Telegram Desktop export: the origin's name and its "channel<id>"
    export = list(references(_row(metadata={"forwarded_from": "کانال دیگر", "forwarded_from_id": "channel1500000002"})))
    assert export[1:] == [("id:1500000002", "کانال دیگر", "forward")]
    assert list(references(_row(metadata={"forwarded_from": "Someone", "forwarded_from_id": "user42"})))[1:] == []


def test_registry_identifiers_and_approvals():
    assert [candidate_of(i) for i in ("@Durov", "durov", "t.me/s/durov", "https://t.me/durov/5", "-1001500000001",
                                      "1500000001", "t.me/+invite")] == \
        ["@durov", "@durov", "@durov", "@durov", "id:1500000001", "id:1500000001", None]
    assert identifier_of("@durov") == "@durov" and identifier_of("id:1500000001") is None


def _explicit_chat(world: tm.World, name: str, text: str) -> tm.SimChat:
    """A channel of one post whose text mentions what ``text`` holds."""
    chat = world.channel(name, messages=0)
    chat.generated = False
    chat.explicit[1] = types.Message(id=1, peer_id=types.PeerChannel(chat.id), date=chat.date_of(1), message=text,
                                     post=True, views=5, entities=entities_for(text))
    return chat


@pytest.fixture
def two_tenants(tmp_path, harness_factory, world):
    """Tenant ``default``: a channel read through the API (50 posts) and another through its web preview (30);
    tenant ``other``: a channel of one post naming ``@only_other``."""
    shared = world.channel("webparity", messages=50)
    api = harness_factory(api_entry("api", "@webparity"))
    api.sync()
    normalize_all(api.lake, api.source)
    web_chat = world.channel("webside", messages=30)
    other = _explicit_chat(world, "otherside", "ask @only_other and https://t.me/s/news_fa")
    with TelegramWebStandIn({"webside": web_chat, "otherside": other}) as server:
        web = web_harness(tmp_path, server.url, web_entry("web", "webside"))
        web.sync()
        web.records()
        theirs = web_harness(tmp_path, server.url, web_entry("theirs", "otherside", tenant="other"))
        theirs.sync()
        theirs.records()
        log = list(server.log)
    return api.lake, shared, web_chat, log


def test_candidates_of_one_tenant_with_counts_dates_and_sources(two_tenants):
    lake, api_chat, web_chat, _ = two_tenants
    rows, own = discovery.compute(lake, "default", "telegram", references)
    by = {r["candidate"]: r for r in rows}
    # @news_fa: mentioned by every post of the first template (ids ≡ 0 mod 6), in both channels, service posts aside
    named = {"api": [i for i in range(2, 51) if i % 6 == 0], "web": [i for i in range(2, 31) if i % 6 == 0]}
    news = by["@news_fa"]
    assert news["mention"] == len(named["api"]) + len(named["web"]) and news["link"] == news["forward"] == 0
    assert news["sources"] == ["default.telegram.api", "default.telegram.web"]
    dates = [api_chat.date_of(i) for i in named["api"]] + [web_chat.date_of(i) for i in named["web"]]
    assert (news["first_seen"], news["last_seen"]) == (min(dates).isoformat(), max(dates).isoformat())
    assert len(news["examples"]) == 3
    # the API's forwards name the origin by id, the page's by username; t.me/s/example is a link
    assert by[f"id:{ORIGIN_CHANNEL_ID}"]["forward"] == 5 and by["@origin_news"]["forward"] == 3
    assert by["@example"]["link"] == len([i for i in range(2, 51) if i % 6 == 2]) + \
        len([i for i in range(2, 31) if i % 6 == 2])
    assert "@reporter_1" in by and "@writer" in by and "@someone" in by
    # the tenant's own chats are no candidates; another tenant's records are not read
    assert f"id:{api_chat.id}" in own and "@webside" in own and f"id:{api_chat.id}" not in by
    assert "@only_other" not in by and all("other." not in s for r in rows for s in r["sources"])
    theirs, _ = discovery.compute(lake, "other", "telegram", references)
    assert [r["candidate"] for r in theirs] == ["@news_fa", "@only_other"]
    assert theirs[0]["sources"] == ["other.telegram.theirs"] and theirs[0]["link"] == 1
    assert [r["count"] for r in rows] == sorted((r["count"] for r in rows), reverse=True)
    assert TEMPLATES[0].count("@news_fa") == 1


def _cli(*args, env):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_a_person_approves_a_candidate_into_the_registry(two_tenants, tmp_path, monkeypatch):
    lake, _, _, requests = two_tenants
    for name in [n for n in os.environ if n.startswith("CRAWL_TELEGRAM_")]:
        monkeypatch.delenv(name)  # no account here, whatever an earlier test of this worker set
    registry = tmp_path / "sources.yaml"
    env = {"CRAWL_LAKE": lake.root, "CRAWL_REGISTRY": str(registry)}
    listed = _cli("discover", "list", "--refresh", "--json", env=env)
    assert listed.exit_code == 0, listed.output
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert "@news_fa" in [r["candidate"] for r in rows] and not any(r["registered"] for r in rows)
    assert not registry.exists()  # listing registers nothing: no candidate is collected before its approval
    assert lake.read_bytes(discovery_file("default", "telegram")) is not None
    # an id-only candidate needs a username; a name nobody named is refused
    by_id = _cli("discover", "approve", f"id:{ORIGIN_CHANNEL_ID}", "--name", "origin", env=env)
    assert by_id.exit_code == 2 and "--identifier" in by_id.output
    assert _cli("discover", "approve", "@only_other", "--name", "x", env=env).exit_code == 2  # another tenant's
    approved = _cli("discover", "approve", "@News_Fa", "--name", "news-fa", env=env)
    assert approved.exit_code == 0, approved.output
    [added] = load_registry(registry).entries
    assert (added.key, added.kind.value, added.identifier) == ("default.telegram.news-fa", "web_channel", "@news_fa")
    again = _cli("discover", "approve", "@news_fa", "--name", "news-fa-2", env=env)
    assert again.exit_code == 2 and "already registered" in again.output
    open_rows = [json.loads(line) for line in _cli("discover", "list", "--json", env=env).stdout.splitlines()]
    assert "@news_fa" not in [r["candidate"] for r in open_rows]
    every = [json.loads(line) for line in _cli("discover", "list", "--json", "--all", env=env).stdout.splitlines()]
    assert next(r for r in every if r["candidate"] == "@news_fa")["registered"] is True
    by_name = _cli("discover", "approve", f"id:{ORIGIN_CHANNEL_ID}", "--name", "origin", "--identifier", "origin_news",
                   "--kind", "channel", env=env)
    assert by_name.exit_code == 0 and "cannot sync until" in by_name.output  # an account's session is not set
    assert len(requests) == 3  # the stand-in saw only the syncs: discovery asks Telegram nothing


def test_the_asset_computes_each_tenants_table(two_tenants, tmp_path, dagster_home):
    lake = two_tenants[0]
    key = dg.AssetKey(["telegram", "discovery_candidates"])
    registry = tmp_path / "sources.yaml"
    registry.write_text("sources:\n  - name: news\n    platform: telegram\n    kind: web_channel\n"
                        "    identifier: t.me/s/news_fa\n")
    result = dg.materialize([defs.get_assets_def(key)], resources={
        "lake": LakeResource(root=lake.root), "registry": RegistryResource(path=str(registry))})
    [event] = result.get_asset_materialization_events()
    meta = event.materialization.metadata
    by_tenant = meta["open_candidates_by_tenant"].data
    assert by_tenant["other"] == 2 and by_tenant["default"] == meta["open_candidates"].value - 2
    shown = [(r.data["tenant"], r.data["candidate"]) for r in meta["candidates"].records]
    assert ("other", "@only_other") in shown and ("default", "@news_fa") not in shown  # registered for default
    assert ("other", "@news_fa") in shown  # registered for default only
    assert discovery.stored(lake, "other", "telegram")["candidates"][1]["candidate"] == "@only_other"
