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
from crawl_assets.sources.telegram.login import (MAX_ATTEMPTS, AppCredentials, LoginConfigError, LoginRefused,
                                                   app_credentials, login)
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
    assert env_names() == {"api_id": "CRAWL_TELEGRAM_API_ID", "api_hash": "CRAWL_TELEGRAM_API_HASH",
                           "session": "CRAWL_TELEGRAM_SESSION", "proxy": "CRAWL_TELEGRAM_PROXY"}
    assert env_names("default", "alice")["session"] == "CRAWL_TELEGRAM_SESSION__DEFAULT__ALICE"
    assert env_names("acme-corp", None)["api_id"] == "CRAWL_TELEGRAM_API_ID__ACME_CORP"


def test_from_env_builds_a_pool_of_envvar_references(no_telegram_env, monkeypatch):
    monkeypatch.setenv("CRAWL_TELEGRAM_API_ID", "12345")
    monkeypatch.setenv("CRAWL_TELEGRAM_API_HASH", HASH)
    monkeypatch.setenv("CRAWL_TELEGRAM_SESSION", SESSION)
    monkeypatch.setenv("CRAWL_TELEGRAM_SESSION__DEFAULT__ALICE", SESSION + "x")
    monkeypatch.setenv("CRAWL_TELEGRAM_API_ID__ACME__BOB", "999")
    monkeypatch.setenv("CRAWL_TELEGRAM_SESSION__ACME__BOB", SESSION + "y")
    monkeypatch.setenv("CRAWL_TELEGRAM_MAX_PAGES", "50")
    resource = TelegramResource.from_env()
    assert sorted(resource.credentials) == ["acme:bob", "default:", "default:alice"]
    # unresolved: only variable names, so nothing secret can reach run config
    assert resource.credentials["default:alice"].session == "CRAWL_TELEGRAM_SESSION__DEFAULT__ALICE"
    assert resource.credentials["default:alice"].api_id == "CRAWL_TELEGRAM_API_ID"  # falls back to the default app
    assert resource.credentials["acme:bob"].api_id == "CRAWL_TELEGRAM_API_ID__ACME__BOB"
    assert isinstance(resource.credentials["acme:bob"].api_id, dg.EnvVar)
    assert resource.max_pages_per_run == 50
    resolved = resource.process_config_and_initialize()
    assert resolved.credentials["acme:bob"].api_id == "999"
    assert resolved.credentials["default:alice"].session == SESSION + "x"
    for text in (repr(resolved), str(resolved), repr(resolved.credentials)):
        assert SESSION not in text and HASH not in text


def test_from_env_reads_the_tunables_set_and_refuses_one_that_is_not_a_number(no_telegram_env, monkeypatch):
    monkeypatch.setenv("CRAWL_TELEGRAM_REQUEST_INTERVAL", "2.5")
    monkeypatch.setenv("CRAWL_TELEGRAM_FLOOD_SLEEP_MAX", "30")
    resource = TelegramResource.from_env()
    assert (resource.request_interval_seconds, resource.flood_sleep_threshold_seconds) == (2.5, 30)
    assert (resource.max_pages_per_run, resource.max_messages_per_run) == (200, 20_000)  # unset: the defaults
    monkeypatch.setenv("CRAWL_TELEGRAM_MAX_MESSAGES", "lots")
    with pytest.raises(ValueError, match="CRAWL_TELEGRAM_MAX_MESSAGES: expected a number, got 'lots'"):
        TelegramResource.from_env()


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
    world.login_account = account.name
    session = asyncio.run(login(AppCredentials(12345, HASH), phone=lambda: account.phone, code=lambda: account.code,
                                password=lambda: pytest.fail("no 2FA on this account")))
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


def _assert_only_a_session_on_stdout(result) -> None:
    """The command succeeded and its stdout is one line: a session string with an auth key."""
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    assert StringSession(lines[0]).auth_key is not None


def test_login_command_prints_only_the_session_on_stdout(world, no_telegram_env, tmp_path, monkeypatch):
    account = world.account("default")
    account.authorized = False
    cwd = _use_standin_for_the_cli(world, account, monkeypatch, tmp_path)
    result = CliRunner().invoke(cli, ["telegram", "login"], input=f"{account.phone}\n{account.code}\n")
    _assert_only_a_session_on_stdout(result)
    assert "CRAWL_TELEGRAM_SESSION" in result.stderr
    assert list(cwd.iterdir()) == []


# -- two-step verification (2FA): the stand-in checks the password with the server half of Telegram's SRP ------

PASSWORD = "رمز دوم 2fa-Secret"


def _two_step_account(world: tm.World, name: str) -> tm.Account:
    account = world.account(name)
    account.authorized, account.password = False, PASSWORD
    return account


def _login_with(world: tm.World, account: tm.Account, passwords: list[str]) -> str:
    """``login()`` against the stand-in, answering the password prompt from ``passwords`` in turn."""
    answers = iter(passwords)
    world.login_account = account.name
    return asyncio.run(login(AppCredentials(12345, HASH), phone=lambda: account.phone, code=lambda: account.code,
                             password=lambda: next(answers)))


def _use_standin_for_the_cli(world: tm.World, account: tm.Account, monkeypatch, tmp_path: Path) -> Path:
    """The command's client talks to the stand-in (``world`` fixture) as ``account``; app credentials set; an
    empty working directory."""
    world.login_account = account.name
    monkeypatch.setenv("CRAWL_TELEGRAM_API_ID", "12345")
    monkeypatch.setenv("CRAWL_TELEGRAM_API_HASH", HASH)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


def test_login_with_two_step_verification_returns_a_session_and_writes_nothing(world, tmp_path, monkeypatch):
    tmp_path = tmp_path / "cwd"
    tmp_path.mkdir()
    monkeypatch.chdir(tmp_path)
    account = _two_step_account(world, "guarded")
    session = _login_with(world, account, [PASSWORD])
    assert account.authorized
    restored = StringSession(session)
    assert restored.dc_id == 2 and restored.auth_key is not None
    assert world.counts["SignInRequest"] == 1  # answered SESSION_PASSWORD_NEEDED
    assert world.counts["GetPasswordRequest"] == 1 and world.counts["CheckPasswordRequest"] == 1
    assert account.srp_pending == {}  # the srp_id was spent
    assert list(tmp_path.iterdir()) == []


def test_a_wrong_two_step_password_is_asked_again(world):
    """Telethon's ``start`` catches PASSWORD_HASH_INVALID, says so on stderr and calls the password prompt again."""
    account = _two_step_account(world, "guarded")
    session = _login_with(world, account, ["not the password", PASSWORD])
    assert account.authorized and StringSession(session).auth_key is not None
    assert world.counts["GetPasswordRequest"] == 2 and world.counts["CheckPasswordRequest"] == 2


def test_three_wrong_two_step_passwords_end_the_login_with_a_clear_error(world):
    account = _two_step_account(world, "guarded")
    with pytest.raises(LoginRefused, match="wrong two-step verification password"):
        _login_with(world, account, ["wrong 1", "wrong 2", "wrong 3", PASSWORD])
    assert not account.authorized
    assert world.counts["CheckPasswordRequest"] == 3


def test_login_command_with_two_step_verification_prints_only_the_session(world, no_telegram_env, tmp_path,
                                                                           monkeypatch):
    account = _two_step_account(world, "default")
    cwd = _use_standin_for_the_cli(world, account, monkeypatch, tmp_path)
    result = CliRunner().invoke(cli, ["telegram", "login"], input=f"{account.phone}\n{account.code}\n{PASSWORD}\n")
    _assert_only_a_session_on_stdout(result)
    assert "Two-step verification password" in result.stderr and "CRAWL_TELEGRAM_SESSION" in result.stderr
    assert PASSWORD not in result.stdout and PASSWORD not in result.stderr  # the prompt hides what is typed
    assert world.counts["CheckPasswordRequest"] == 1
    assert list(cwd.iterdir()) == []


def test_login_command_with_wrong_two_step_passwords_exits_with_one_line(world, no_telegram_env, tmp_path, monkeypatch):
    account = _two_step_account(world, "default")
    cwd = _use_standin_for_the_cli(world, account, monkeypatch, tmp_path)
    wrong = ["wrong-pass-1", "wrong-pass-2", "wrong-pass-3"]
    result = CliRunner().invoke(cli, ["telegram", "login"], input="\n".join([account.phone, account.code, *wrong]) + "\n")
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)  # a clean exit, not an exception escaping the command
    assert result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: wrong two-step verification password ({MAX_ATTEMPTS} tries); nothing was saved, "
                      "run the command again"]
    assert result.stderr.count("Invalid password") == MAX_ATTEMPTS  # Telethon says so after each wrong try
    assert "Traceback" not in result.stderr
    assert not any(w in result.output for w in wrong)
    assert not account.authorized and list(cwd.iterdir()) == []


def test_login_command_with_wrong_codes_exits_with_one_line(world, no_telegram_env, tmp_path, monkeypatch):
    account = world.account("default")
    account.authorized = False
    _use_standin_for_the_cli(world, account, monkeypatch, tmp_path)
    result = CliRunner().invoke(cli, ["telegram", "login"], input=f"{account.phone}\n11111\n22222\n33333\n")
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert "error: wrong login code" in result.stderr
    assert world.counts["SignInRequest"] == MAX_ATTEMPTS
