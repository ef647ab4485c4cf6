"""TelegramResource from the environment (EnvVar only), and the one-time login helper."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import dagster as dg
import pytest
from click.testing import CliRunner
from telethon.sessions import StringSession

from crawl_assets.cli.main import cli
from crawl_assets.sources.telegram.login import AppCredentials, LoginConfigError, app_credentials, login
from crawl_assets.sources.telegram.resource import TelegramResource, env_names
from crawl_assets_tests.sources.telegram.conftest import SESSION
from crawl_assets_tests.standins import telegram_mtproto as tm
from crawl_assets_tests.fakes import FAKE_API_HASH

HASH = FAKE_API_HASH


@pytest.fixture
def no_telegram_env(monkeypatch):
    for key in list(os.environ):
        if key.startswith("CRAWL_TELEGRAM_"):
            monkeypatch.delenv(key)


def test_env_names():
    assert env_names("default") == {"api_id": "CRAWL_TELEGRAM_API_ID", "api_hash": "CRAWL_TELEGRAM_API_HASH",
                                    "session": "CRAWL_TELEGRAM_SESSION"}
    assert env_names("alice")["session"] == "CRAWL_TELEGRAM_ALICE_SESSION"


def test_from_env_builds_a_pool_of_envvar_references(no_telegram_env, monkeypatch):
    monkeypatch.setenv("CRAWL_TELEGRAM_API_ID", "12345")
    monkeypatch.setenv("CRAWL_TELEGRAM_API_HASH", HASH)
    monkeypatch.setenv("CRAWL_TELEGRAM_SESSION", SESSION)
    monkeypatch.setenv("CRAWL_TELEGRAM_ALICE_SESSION", SESSION + "x")
    monkeypatch.setenv("CRAWL_TELEGRAM_BOB_API_ID", "999")
    monkeypatch.setenv("CRAWL_TELEGRAM_BOB_SESSION", SESSION + "y")
    monkeypatch.setenv("CRAWL_TELEGRAM_MAX_PAGES", "50")
    resource = TelegramResource.from_env()
    assert sorted(resource.credentials) == ["alice", "bob", "default"]
    # unresolved: only variable names, so nothing secret can reach run config
    assert resource.credentials["alice"].session == "CRAWL_TELEGRAM_ALICE_SESSION"
    assert resource.credentials["alice"].api_id == "CRAWL_TELEGRAM_API_ID"  # falls back to the default app
    assert resource.credentials["bob"].api_id == "CRAWL_TELEGRAM_BOB_API_ID"
    assert isinstance(resource.credentials["bob"].api_id, dg.EnvVar)
    assert resource.max_pages_per_run == 50
    resolved = resource.process_config_and_initialize()
    assert resolved.credentials["bob"].api_id == "999"
    assert resolved.credentials["alice"].session == SESSION + "x"
    for text in (repr(resolved), str(resolved), repr(resolved.credentials)):
        assert SESSION not in text and HASH not in text


def test_from_env_without_any_session_is_an_empty_pool(no_telegram_env):
    """No unset EnvVar in the config: it would fail every Telegram run at start, export sources included.
    A live source then fails naming CRAWL_TELEGRAM_SESSION (see test_asset)."""
    resource = TelegramResource.from_env()
    assert resource.credentials == {}


def test_login_refuses_without_api_id(no_telegram_env, tmp_path, monkeypatch):
    tmp_path = tmp_path / "cwd"
    tmp_path.mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LoginConfigError, match="CRAWL_TELEGRAM_API_ID"):
        app_credentials()
    result = CliRunner().invoke(cli, ["telegram", "login"])
    assert result.exit_code == 2 and "CRAWL_TELEGRAM_API_ID" in result.output
    monkeypatch.setenv("CRAWL_TELEGRAM_API_ID", "not-a-number")
    monkeypatch.setenv("CRAWL_TELEGRAM_API_HASH", HASH)
    result = CliRunner().invoke(cli, ["telegram", "login", "--credential", "Bad Name"])
    assert result.exit_code == 2
    assert list(tmp_path.iterdir()) == []


def test_login_returns_a_session_string_and_writes_nothing(world, tmp_path, monkeypatch):
    tmp_path = tmp_path / "cwd"
    tmp_path.mkdir()
    monkeypatch.chdir(tmp_path)
    account = world.account("fresh")
    account.authorized = False
    before = sorted(p.name for p in Path.home().iterdir()) if Path.home().exists() else []
    session = asyncio.run(login(AppCredentials(12345, HASH), phone=lambda: account.phone, code=lambda: account.code,
                                password=lambda: pytest.fail("no 2FA on this account"),
                                sender=tm.StandinSender(world, account)))
    assert account.authorized
    restored = StringSession(session)
    assert restored.dc_id == 2 and restored.auth_key is not None
    assert list(tmp_path.iterdir()) == []  # no .session file anywhere we ran
    after = sorted(p.name for p in Path.home().iterdir()) if Path.home().exists() else []
    assert [n for n in after if n not in before and n.endswith(".session")] == []
    assert world.counts["SendCodeRequest"] == 1 and world.counts["SignInRequest"] == 1


def test_check_without_configuration_names_the_missing_variables(no_telegram_env):
    result = CliRunner().invoke(cli, ["telegram", "check"])
    assert result.exit_code == 2
    assert "CRAWL_TELEGRAM_SESSION" in result.output and "CRAWL_TELEGRAM_API_ID" in result.output


def test_login_command_prints_only_the_session_on_stdout(world, no_telegram_env, tmp_path, monkeypatch):
    import telethon.client.telegrambaseclient as base

    account = world.account("default")
    account.authorized = False
    # the stand-in takes the place of Telethon's MTProtoSender for the client the command builds
    monkeypatch.setattr(base, "MTProtoSender", lambda *a, **k: tm.StandinSender(world, account))
    monkeypatch.setenv("CRAWL_TELEGRAM_API_ID", "12345")
    monkeypatch.setenv("CRAWL_TELEGRAM_API_HASH", HASH)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(cli, ["telegram", "login"], input=f"{account.phone}\n{account.code}\n")
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    assert StringSession(lines[0]).auth_key is not None
    assert "CRAWL_TELEGRAM_SESSION" in result.stderr
    assert list(cwd.iterdir()) == []
