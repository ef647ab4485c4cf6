"""``crawl-assets telegram``: log an account in once (prints its session string) and check sessions."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys

import click

from crawl_assets.cli.common import fail
from crawl_assets.core import names


@click.group()
def telegram() -> None:
    """Telegram accounts used by the collector (see docs/sources/telegram.md)."""


def _credential(value: str | None) -> str | None:
    if value is not None and not names.is_credential(value):
        fail(f"--credential {value!r}: {names.CREDENTIAL_RULE}")
    return value


def _tenant(value: str) -> str:
    if not names.is_tenant(value):
        fail(f"--tenant {value!r}: {names.TENANT_RULE}")
    return value


tenant_option = click.option("--tenant", default="default", show_default=True, help="The tenant the account belongs to.")


@telegram.command("login")
@tenant_option
@click.option("--credential", default=None, help="Credential name the session is for (default: the tenant's default).")
@click.option("--phone", default=None, help="Phone number in international format; asked for when omitted.")
def login_command(tenant: str, credential: str | None, phone: str | None) -> None:
    """Log a Telegram account in and print its session string once.

    Needs the app's api_id/api_hash (CRAWL_TELEGRAM_API_ID/_API_HASH, or the tenant's or credential's own,
    e.g. CRAWL_TELEGRAM_API_ID__ACME). Nothing is written to disk: copy the printed string into your secret
    store under the variable it names (CRAWL_TELEGRAM_SESSION[__TENANT[__NAME]]). Anyone holding it can use
    the account. Goes through the credential's proxy when CRAWL_TELEGRAM_PROXY[__TENANT[__NAME]] is set.
    """
    from crawl_assets.sources.telegram.login import LoginConfigError, LoginRefused, app_credentials, login
    from crawl_assets.sources.telegram.resource import env_names

    tenant, name = _tenant(tenant), _credential(credential)
    try:
        app = app_credentials(tenant, name)
    except LoginConfigError as exc:
        fail(str(exc))
    if app.proxy is not None:
        click.echo(f"connecting through the {app.proxy.shown} proxy", err=True)
    # stdout carries only the session string; prompts and Telethon's greeting go to stderr
    with contextlib.redirect_stdout(sys.stderr):
        try:
            session = asyncio.run(login(
                app,
                phone=(lambda: phone) if phone else (lambda: click.prompt("Phone number (international format, e.g. +98...)", err=True)),
                code=lambda: click.prompt("Login code Telegram sent you", err=True),
                password=lambda: click.prompt("Two-step verification password", hide_input=True, err=True),
            ))
        except LoginRefused as exc:  # wrong password/code, a refusal by Telegram, a failing proxy: one line, exit 1
            fail(str(exc), code=1)
        except LoginConfigError as exc:
            fail(str(exc))
    var = env_names(tenant, name)["session"]
    click.echo(f"\nStore this as the secret {var} (it is shown only now, and never written to disk):", err=True)
    click.echo(session)


@telegram.command("check")
@tenant_option
@click.option("--credential", "credentials", multiple=True,
              help="Credential(s) of --tenant to check; default: every configured account of every tenant.")
def check_command(tenant: str, credentials: tuple[str, ...]) -> None:
    """Session-health check: connect with each configured account and report whether it is authorized."""
    from crawl_assets.sources.telegram.resource import TelegramResource

    try:
        resource = TelegramResource.from_env().process_config_and_initialize()
    except Exception as exc:  # an unset variable: Dagster's message names it
        missing = sorted(set(re.findall(r'environment variable "([A-Z0-9_]+)"', str(exc))))
        fail(f"Telegram credentials are not configured: set {', '.join(missing) or 'CRAWL_TELEGRAM_*'}")
    wanted = [(_tenant(tenant), _credential(c)) for c in credentials] or [
        (key.split(":")[0], key.split(":")[1] or None) for key in sorted(resource.credentials)]
    if not wanted:
        fail("Telegram credentials are not configured: set CRAWL_TELEGRAM_API_ID, CRAWL_TELEGRAM_API_HASH and "
             "CRAWL_TELEGRAM_SESSION[__TENANT[__NAME]]; see docs/sources/telegram.md")

    async def run() -> list[dict]:
        return [await resource.health(t, n) for t, n in wanted]

    results = asyncio.run(run())
    for result in results:
        click.echo(json.dumps(result, ensure_ascii=False))
    if not all(r["ok"] for r in results):
        raise SystemExit(1)
