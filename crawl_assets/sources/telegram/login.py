"""One-time login of a Telegram account: returns the ``StringSession`` string to store as a secret.

The session lives only in memory (Telethon's ``StringSession`` writes no file) and is handed back once;
the caller prints it for the user to put into ``CRAWL_TELEGRAM_SESSION[__TENANT[__NAME]]``. The login goes
through the credential's proxy (``CRAWL_TELEGRAM_PROXY...``) when one is set, as the collector's connections do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from telethon import TelegramClient, errors
from telethon.sessions import StringSession

from crawl_assets import settings
from crawl_assets.sources.telegram.client import APP_VERSION, DEVICE_MODEL, SYSTEM_VERSION, proxy_arguments
from crawl_assets.sources.telegram import errors as failures
from crawl_assets.sources.telegram.errors import SourceGone
from crawl_assets.sources.telegram.proxy import ProxyConfigError, ProxySpec, parse_proxy
from crawl_assets.sources.telegram.resource import DEFAULT_TENANT, app_vars
from crawl_assets.sdk.tenant_secrets import credential_key


class LoginConfigError(ValueError):
    """The app credentials needed to log in are missing or malformed (the message names the variable)."""


class LoginRefused(Exception):
    """Telegram did not let the account in (wrong password or code, bad phone number, flood wait...)."""


MAX_ATTEMPTS = 3  # tries Telethon's ``start`` gives the code and the 2FA password before giving up


def refusal_message(exc: BaseException) -> str | None:
    """One line saying why a login failed, for an error Telethon's ``start`` raises; None for anything else."""
    if isinstance(exc, errors.PasswordHashInvalidError):
        return f"wrong two-step verification password ({MAX_ATTEMPTS} tries); nothing was saved, run the command again"
    if isinstance(exc, RuntimeError) and "sign-in attempts failed" in str(exc):
        return f"wrong login code ({MAX_ATTEMPTS} tries); nothing was saved, run the command again"
    if isinstance(exc, errors.RPCError):  # PHONE_NUMBER_INVALID, FLOOD_WAIT_X...: Telethon's own sentence
        return "Telegram refused the login: " + re.sub(r"\s*\(caused by \w+\)$", "", str(exc))
    return None


@dataclass(frozen=True)
class AppCredentials:
    api_id: int
    api_hash: str
    proxy: ProxySpec | None = field(default=None, repr=False)
    credential: str = "default:"


def app_credentials(tenant: str = DEFAULT_TENANT, credential: str | None = None, api_id: str | None = None,
                    api_hash: str | None = None) -> AppCredentials:
    """The app's ``api_id``/``api_hash``: given explicitly, or from the variables ``app_vars`` picks for the
    tenant's credential (its own, its tenant's default app, the operator's app)."""
    env = settings.environment()
    id_var, hash_var = app_vars(tenant, credential, "api_id", env), app_vars(tenant, credential, "api_hash", env)
    raw_id = api_id or env.get(id_var)
    raw_hash = api_hash or env.get(hash_var)
    if not raw_id:
        raise LoginConfigError(f"no api_id: set {id_var} to the api_id of your app "
                               "from https://my.telegram.org → API development tools")
    if not raw_hash:
        raise LoginConfigError(f"no api_hash: set {hash_var}")
    try:
        number = int(raw_id)
    except ValueError:
        raise LoginConfigError("api_id must be a number (the App api_id, not the api_hash)") from None
    proxy_var = app_vars(tenant, credential, "proxy", env)
    try:
        proxy = parse_proxy(env.get(proxy_var, ""), proxy_var)
    except ProxyConfigError as exc:
        raise LoginConfigError(str(exc)) from None
    return AppCredentials(number, raw_hash, proxy, credential_key(tenant, credential))


async def login(app: AppCredentials, *, phone: Callable[[], str], code: Callable[[], str],
                password: Callable[[], str]) -> str:
    """Log in interactively (code, and the 2FA password when the account has one); the session string.

    A wrong code or password is asked again (Telethon's ``start``); after ``MAX_ATTEMPTS`` wrong ones, or any
    other refusal by Telegram, raises ``LoginRefused`` with a one-line reason.
    """
    try:
        through = proxy_arguments(app.proxy, app.credential)
    except SourceGone as exc:
        raise LoginConfigError(exc.reason) from None
    client = TelegramClient(StringSession(), app.api_id, app.api_hash, receive_updates=False,
                            device_model=DEVICE_MODEL, system_version=SYSTEM_VERSION, app_version=APP_VERSION,
                            **through)
    try:
        await client.start(phone=phone, code_callback=code, password=password, max_attempts=MAX_ATTEMPTS)
        return client.session.save()
    except (errors.RPCError, RuntimeError) as exc:
        message = refusal_message(exc)
        if message is None:
            raise
        raise LoginRefused(message) from exc
    except failures.NETWORK as exc:
        if app.proxy is None:
            raise
        what = app.proxy.scrub(str(exc))[:200] or "no answer"
        raise LoginRefused(f"cannot reach Telegram through the {app.proxy.shown} proxy ({type(exc).__name__}: "
                           f"{what}); nothing was saved") from None
    finally:
        await client.disconnect()
