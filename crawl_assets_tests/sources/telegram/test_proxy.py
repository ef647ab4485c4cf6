"""Proxies per Telegram account: SOCKS5, HTTP CONNECT and MTProxy, on real sockets.

The stand-in's data centres accept only connections coming from the proxies' egress address, so a sync that
succeeds went through the proxy; the proxies and data centres count every connection. The proxy's password
and the MTProxy secret exist only in the credential's URL (an environment variable in production)."""

from __future__ import annotations

import asyncio
import logging
import time

import dagster as dg
import pytest

from crawl_assets.lake import Lake
from crawl_assets.sdk.errors import PauseSource
from crawl_assets.sdk.sync import CollectEnv
from crawl_assets.sources.telegram.collect import collect
from crawl_assets.sources.telegram.errors import ProxyFailed
from crawl_assets.sources.telegram.login import AppCredentials, LoginRefused, app_credentials, login
from crawl_assets.sources.telegram.proxy import ProxyConfigError, parse_proxy
from crawl_assets.sources.telegram.resource import TelegramCredential, TelegramResource
from crawl_assets_tests.fakes import FAKE_API_HASH
from crawl_assets_tests.sources.telegram.conftest import entry
from crawl_assets_tests.standins import telegram_mtproto as tm

PASSWORD = "pr0xy-s3cret!"
SECRET = "0123456789abcdef0123456789abcdef"


# -- the proxy URL -----------------------------------------------------------------------------------

def test_proxy_urls_of_every_kind_parse_and_show_no_secret():
    socks = parse_proxy(f"socks5://crawler:{PASSWORD.replace('!', '%21')}@10.1.2.3:1080")
    assert (socks.kind, socks.host, socks.port, socks.username, socks.password) == (
        "socks5", "10.1.2.3", 1080, "crawler", PASSWORD)
    assert socks.shown == "socks5://10.1.2.3:1080" and PASSWORD not in repr(socks)
    assert socks.telethon()["proxy"] == {"proxy_type": "socks5", "addr": "10.1.2.3", "port": 1080, "rdns": True,
                                         "username": "crawler", "password": PASSWORD}
    http = parse_proxy("http://proxy.example:3128")
    assert (http.kind, http.username, http.password) == ("http", None, None)
    for url in (f"mtproxy://mt.example:443?secret={SECRET}", f"tg://proxy?server=mt.example&port=443&secret={SECRET}",
                f"https://t.me/proxy?server=mt.example&port=443&secret={SECRET}"):
        mt = parse_proxy(url)
        assert (mt.kind, mt.host, mt.port, mt.secret) == ("mtproxy", "mt.example", 443, SECRET)
        assert SECRET not in repr(mt) and mt.telethon()["connection"].__name__ == "ConnectionTcpMTProxyIntermediate"
        assert mt.telethon()["proxy"] == ("mt.example", 443, SECRET)
    padded = parse_proxy(f"mtproxy://mt.example:443?secret=dd{SECRET}")
    assert padded.telethon()["connection"].__name__ == "ConnectionTcpMTProxyRandomizedIntermediate"
    assert parse_proxy("") is None and parse_proxy("direct") is None and parse_proxy(" none ") is None


@pytest.mark.parametrize(("url", "says"), [
    (f"socks4://u:{PASSWORD}@h:1", "unknown proxy scheme"),
    (f"https://u:{PASSWORD}@h:1", "unknown proxy scheme"),
    (f"socks5://u:{PASSWORD}@h", "port is missing"),
    (f"socks5://u:{PASSWORD}@h:99999", "port"),
    (f"socks5://:{PASSWORD}@h:1080", "needs a user name"),
    ("mtproxy://h:443", "needs its secret"),
    (f"mtproxy://h:443?secret=ee{SECRET}6578616d706c652e636f6d", "fake-TLS"),
    (f"mtproxy://h:443?secret={SECRET[:-2]}", "16 bytes"),
])
def test_a_bad_proxy_url_is_refused_naming_the_setting_never_the_secret(url, says):
    with pytest.raises(ProxyConfigError, match=says) as caught:
        parse_proxy(url, "CRAWL_TELEGRAM_PROXY__ACME")
    assert str(caught.value).startswith("CRAWL_TELEGRAM_PROXY__ACME: ")
    assert PASSWORD not in str(caught.value) and SECRET[:-2] not in str(caught.value)


def test_from_env_takes_each_accounts_proxy_by_reference_with_the_apps_fallback(monkeypatch):
    for key in [k for k in __import__("os").environ if k.startswith("CRAWL_TELEGRAM_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("CRAWL_TELEGRAM_API_ID", "12345")
    monkeypatch.setenv("CRAWL_TELEGRAM_API_HASH", FAKE_API_HASH)
    for var in ("CRAWL_TELEGRAM_SESSION", "CRAWL_TELEGRAM_SESSION__ACME", "CRAWL_TELEGRAM_SESSION__ACME__BOB",
                "CRAWL_TELEGRAM_SESSION__BETA"):
        monkeypatch.setenv(var, tm.session_for())
    monkeypatch.setenv("CRAWL_TELEGRAM_PROXY__ACME", f"socks5://u:{PASSWORD}@10.0.0.9:1080")
    monkeypatch.setenv("CRAWL_TELEGRAM_PROXY__ACME__BOB", f"mtproxy://mt.example:443?secret={SECRET}")
    resource = TelegramResource.from_env()
    creds = resource.credentials
    assert creds["acme:"].proxy == "CRAWL_TELEGRAM_PROXY__ACME" and isinstance(creds["acme:"].proxy, dg.EnvVar)
    assert creds["acme:bob"].proxy == "CRAWL_TELEGRAM_PROXY__ACME__BOB"
    assert creds["default:"].proxy == "" and creds["beta:"].proxy == ""  # no proxy of their own, none to fall to
    resolved = resource.process_config_and_initialize()
    assert resolved.credentials["acme:"].proxy.startswith("socks5://")
    for text in (repr(resolved), str(resolved), repr(resolved.credentials), str(resource)):
        assert PASSWORD not in text and SECRET not in text
    monkeypatch.setenv("CRAWL_TELEGRAM_PROXY", "http://10.0.0.1:3128")  # the operator's: every account without one
    assert TelegramResource.from_env().credentials["beta:"].proxy == "CRAWL_TELEGRAM_PROXY"


# -- on real sockets -----------------------------------------------------------------------------------

def eventually(check, seconds: float = 2.0) -> bool:
    """``check()`` once the proxies' thread has caught up (they count after answering the client)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def wired_resource(tmp_path, network: tm.Network, proxy: str, **kwargs) -> TelegramResource:
    settings = {"request_interval_seconds": 0.0, "network_backoff_seconds": 0.01, "network_retries": 1,
                "account_wait_seconds": 1.0, "lock_dir": str(tmp_path / "locks"), **kwargs}
    cred = TelegramCredential(api_id="12345", api_hash=FAKE_API_HASH, proxy=proxy,
                              session=tm.session_for("default"))
    return TelegramResource(credentials={"default:": cred}, **settings)


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, msg: str) -> None:
        self.lines.append(msg)

    warning = error = debug = info


class Checkpoints:
    def __init__(self) -> None:
        self.saved: list[dict] = []

    def load(self) -> dict:
        return self.saved[-1] if self.saved else {}

    def save(self, state: dict) -> None:
        self.saved.append(state)


def run_collect(tmp_path, resource: TelegramResource, source) -> tuple[object, Log]:
    log = Log()
    env = CollectEnv(Lake(str(tmp_path / "lake")), "run-1", Checkpoints(), log)
    return collect(resource, source, env), log


def test_every_connection_of_a_sync_goes_through_the_socks5_proxy_media_too(world, network, tmp_path):
    chat = world.channel("through", messages=260)
    chat.media_dc = 4  # its photos live on another data centre: Telethon opens a second connection for them
    proxy = network.proxy("socks5", password=PASSWORD)
    resource = wired_resource(tmp_path, network, proxy.url)
    collected, _ = run_collect(tmp_path, resource, entry("through", "@through", download_media=True))

    assert collected.metadata["records_new"] == 260 and collected.metadata["media_files"] == 20  # every 13th
    served, refused = network.connections()
    assert refused == 0  # nothing tried to reach a data centre directly
    assert network.dcs[2].accepted == {tm.EGRESS: 1} and network.dcs[4].accepted == {tm.EGRESS: 1}
    assert sorted(proxy.tunnels) == sorted(f"127.0.0.1:{network.dcs[dc].port}" for dc in (2, 4))
    assert world.counts["ExportAuthorizationRequest"] == world.counts["ImportAuthorizationRequest"] == 1
    assert world.counts["GetFileRequest"] >= 20


def test_without_the_proxy_the_data_centre_is_out_of_reach(world, network, tmp_path):
    """The control of the test above: a direct connection is refused, so success there proves the proxy path."""
    world.channel("through", messages=10)
    resource = wired_resource(tmp_path, network, "")
    with pytest.raises((ConnectionError, OSError)):
        run_collect(tmp_path, resource, entry("through", "@through"))
    assert network.connections()[0] == 0 and network.connections()[1] >= 1


def test_an_http_connect_proxy_carries_the_sync(world, network, tmp_path):
    world.channel("viahttp", messages=150)
    proxy = network.proxy("http", password=PASSWORD)
    collected, _ = run_collect(tmp_path, wired_resource(tmp_path, network, proxy.url), entry("viahttp", "@viahttp"))
    assert collected.metadata["records_new"] == 150
    assert network.connections() == (1, 0) and proxy.tunnels == [f"127.0.0.1:{network.dcs[2].port}"]


@pytest.mark.parametrize("kind", ["socks5", "http"])
def test_a_proxy_refusing_the_password_pauses_the_source_with_a_reason_without_it(world, network, tmp_path, kind, caplog):
    world.channel("paused", messages=10)
    proxy = network.proxy(kind, password="the-right-one")
    wrong = proxy.url.replace("the-right-one", PASSWORD)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(PauseSource) as caught:
        run_collect(tmp_path, wired_resource(tmp_path, network, wrong), entry("paused", "@paused"))
    reason = str(caught.value)
    assert f"the {kind}://127.0.0.1:{proxy.port} proxy of Telegram credential 'default:' failed after 2 attempts" in reason
    assert PASSWORD not in reason and PASSWORD not in caplog.text
    assert isinstance(caught.value.__cause__, ProxyFailed) and caught.value.__cause__.__cause__ is None
    assert eventually(lambda: proxy.refusals == 2) and network.connections() == (0, 0)


def test_an_mtproxy_with_its_secret_carries_the_sync_and_telegram_is_told_of_it(world, network, tmp_path):
    world.channel("viamt", messages=120)
    mt = network.mtproxy(bytes.fromhex(SECRET))
    url = f"tg://proxy?server=127.0.0.1&port={mt.port}&secret={SECRET}"
    collected, _ = run_collect(tmp_path, wired_resource(tmp_path, network, url), entry("viamt", "@viamt"))
    assert collected.metadata["records_new"] == 120
    assert mt.served == 1 and mt.dc_ids == [2] and network.connections() == (1, 0)
    assert world.connections == ["ConnectionTcpMTProxyIntermediate"]
    # InitConnection names the proxy, as Telegram's apps do (Telethon sets it for MTProxy connections)
    assert {(p.address, p.port) for p in world.init_proxies} == {("127.0.0.1", mt.port)}


def test_an_mtproxy_secret_that_does_not_match_pauses_without_showing_either(world, network, tmp_path):
    world.channel("viamt", messages=10)
    mt = network.mtproxy(bytes.fromhex(SECRET))
    other = "fedcba9876543210fedcba9876543210"
    with pytest.raises(PauseSource) as caught:
        run_collect(tmp_path, wired_resource(tmp_path, network, f"mtproxy://127.0.0.1:{mt.port}?secret={other}",
                                              network_retries=0), entry("viamt", "@viamt"))
    assert f"mtproxy://127.0.0.1:{mt.port} proxy" in str(caught.value)
    assert other not in str(caught.value) and SECRET not in str(caught.value)
    assert mt.refused == 1 and mt.served == 0


def test_telegram_login_goes_through_the_accounts_proxy(world, network, monkeypatch):
    world.account("fresh").authorized = False
    world.login_account = "fresh"
    proxy = network.proxy("socks5", password=PASSWORD)
    monkeypatch.setenv("CRAWL_TELEGRAM_API_ID", "12345")
    monkeypatch.setenv("CRAWL_TELEGRAM_API_HASH", FAKE_API_HASH)
    monkeypatch.setenv("CRAWL_TELEGRAM_PROXY__ACME__ALICE", proxy.url)
    app = app_credentials("acme", "alice")
    assert app.proxy is not None and app.proxy.shown == f"socks5://127.0.0.1:{proxy.port}"
    assert PASSWORD not in repr(app)
    session = asyncio.run(login(app, phone=lambda: "+989120000000", code=lambda: "12345", password=lambda: ""))
    assert session and network.connections() == (1, 0) and len(proxy.tunnels) == 1
    bad = AppCredentials(app.api_id, app.api_hash, parse_proxy(proxy.url.replace(PASSWORD, "nope")), app.credential)
    with pytest.raises(LoginRefused, match=f"through the socks5://127.0.0.1:{proxy.port} proxy") as caught:
        asyncio.run(login(bad, phone=lambda: "+989120000000", code=lambda: "12345", password=lambda: ""))
    assert "nope" not in str(caught.value)


def test_a_failing_proxy_pauses_each_source_of_the_account_in_the_registry_and_leaks_nowhere(
        world, network, tmp_path, monkeypatch):
    """Through Dagster, with the proxy URL in the credential's environment variable as in production: the
    registry keeps the reason, and the password is in no registry, run config, event or lake file."""
    from pathlib import Path

    from crawl_assets.orchestration.assets import raw_asset
    from crawl_assets.orchestration.resources import LakeResource, RegistryResource
    from crawl_assets.registry import SourceStatus, load_registry, update_registry

    proxy = network.proxy("socks5", password="the-right-one")
    registry = tmp_path / "sources.yaml"
    update_registry(registry, lambda reg: [reg.add(entry(n, f"@{n}")) for n in ("one", "two")])
    for name in ("one", "two"):
        world.channel(name, messages=20)
    monkeypatch.setenv("CRAWL_TELEGRAM_API_ID", "12345")
    monkeypatch.setenv("CRAWL_TELEGRAM_API_HASH", FAKE_API_HASH)
    monkeypatch.setenv("CRAWL_TELEGRAM_SESSION", tm.session_for())
    monkeypatch.setenv("CRAWL_TELEGRAM_PROXY", proxy.url.replace("the-right-one", PASSWORD))
    telegram = TelegramResource(**{**dict(wired_resource(tmp_path, network, "")),
                                   "credentials": TelegramResource.from_env().credentials})
    resources = {"lake": LakeResource(root=str(tmp_path / "lake")), "registry": RegistryResource(path=str(registry)),
                 "telegram": telegram}
    asset = raw_asset("telegram")
    with dg.instance_for_test() as instance:
        keys = ["default.telegram.one", "default.telegram.two"]
        instance.add_dynamic_partitions("telegram_sources", keys)
        for key in keys:
            result = dg.materialize([asset], resources=resources, partition_key=key, instance=instance,
                                    raise_on_error=False)
            assert not result.success
            paused = load_registry(registry).get(key)
            assert paused.status is SourceStatus.paused
            assert f"socks5://127.0.0.1:{proxy.port} proxy of Telegram credential 'default:' failed" in paused.status_reason
        for run in instance.get_runs():
            assert PASSWORD not in str(run.run_config) and PASSWORD not in str(run.tags)
            for log in instance.all_logs(run.run_id):
                assert PASSWORD not in str(log)
    assert PASSWORD not in registry.read_text()
    for path in Path(tmp_path / "lake").rglob("*"):
        assert not path.is_file() or PASSWORD.encode() not in path.read_bytes()
    assert network.connections() == (0, 0)
