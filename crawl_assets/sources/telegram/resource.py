"""``TelegramResource``: a pool of authorized Telegram accounts, each picked by a credential *name*.

The registry names a credential (``credential: alice``); the secrets (``api_id``, ``api_hash``, the
``StringSession`` string) come only from environment variables through ``dg.EnvVar``, so run config,
tags, metadata and logs only ever show the variable names. See docs/sources/telegram.md.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import dagster as dg
from pydantic import Field

from crawl_assets import settings
from crawl_assets.sources.telegram.client import ClientSettings, CrawlClient, SenderFactory
from crawl_assets.sources.telegram.errors import SourceGone
from crawl_assets.sources.telegram.pacing import AccountLock
from crawl_assets.sources.telegram.sync import Budget

ENV_PREFIX = "CRAWL_TELEGRAM_"
DEFAULT = "default"
_NAMED_SESSION = re.compile(r"^CRAWL_TELEGRAM_([A-Z0-9_]+)_SESSION$")


class TelegramCredential(dg.Config):
    """One authorized account. Fill every field with ``dg.EnvVar``."""

    api_id: str = Field(description="The api_id of your app at my.telegram.org (EnvVar).")
    api_hash: str = Field(description="The api_hash of that app (EnvVar).", repr=False)
    session: str = Field(description="Telethon StringSession from `crawl-assets telegram login` (EnvVar).", repr=False)


def env_names(credential: str) -> dict[str, str]:
    """The environment variables of a credential: ``CRAWL_TELEGRAM_*`` (default) or ``CRAWL_TELEGRAM_<NAME>_*``."""
    infix = "" if credential == DEFAULT else f"{credential.upper()}_"
    return {f: f"{ENV_PREFIX}{infix}{f.upper()}" for f in ("api_id", "api_hash", "session")}


def _float(name: str, default: float) -> float:
    value = os.environ.get(name)
    try:
        return float(value) if value else default
    except ValueError:
        raise ValueError(f"environment variable {name}: expected a number, got {value!r}") from None


class TelegramResource(dg.ConfigurableResource):
    """Authorized accounts by credential name, and how gently they are used."""

    credentials: dict[str, TelegramCredential] = Field(default_factory=dict)
    default_credential: str = Field(DEFAULT, description="Used by sources that name no credential.")
    request_interval_seconds: float = Field(1.0, ge=0, description="Minimum gap between two requests of one account.")
    flood_sleep_threshold_seconds: int = Field(60, ge=0, description="FLOOD_WAITs up to this are slept in place; "
                                               "longer ones end the step with a retry after the wait.")
    flood_retries: int = Field(3, ge=0, description="Step retries granted for long flood waits.")
    max_pages_per_run: int = Field(200, gt=0, description="History/replies requests per source and run.")
    max_messages_per_run: int = Field(20_000, gt=0, description="Messages fetched per source and run.")
    pages_per_checkpoint: int = Field(5, gt=0, description="Pages per raw batch; the cursor is saved after each.")
    network_retries: int = Field(3, ge=0, description="In-place retries of a dropped connection, with backoff.")
    network_backoff_seconds: float = Field(2.0, ge=0, description="First backoff; doubles, with jitter.")
    account_wait_seconds: float = Field(60.0, ge=0, description="How long to wait for an account another run holds.")
    lock_dir: str = Field("", description="Account lock files; empty means $DAGSTER_HOME/locks.")
    sender_factory: str = Field("", description="Tests and bench only: 'module:callable' returning a stand-in "
                                "MTProto sender for a credential name. Empty in production.")

    @classmethod
    def from_env(cls) -> "TelegramResource":
        """The pool from the environment: the default credential (``CRAWL_TELEGRAM_API_ID``, ``_API_HASH``,
        ``_SESSION``) and one per ``CRAWL_TELEGRAM_<NAME>_SESSION`` (its ``_API_ID``/``_API_HASH`` fall back to
        the default app's). Values stay ``EnvVar`` references; tunables are read as plain numbers."""
        env = os.environ
        named = sorted({m.group(1).lower() for k in env if (m := _NAMED_SESSION.match(k))} - {"api"})
        creds: dict[str, TelegramCredential] = {}
        if env.get(env_names(DEFAULT)["session"]):
            creds[DEFAULT] = cls._credential(DEFAULT)
        for name in named:
            creds[name] = cls._credential(name)
        return cls(
            credentials=creds,
            request_interval_seconds=_float("CRAWL_TELEGRAM_REQUEST_INTERVAL", 1.0),
            flood_sleep_threshold_seconds=int(_float("CRAWL_TELEGRAM_FLOOD_SLEEP_MAX", 60)),
            max_pages_per_run=int(_float("CRAWL_TELEGRAM_MAX_PAGES", 200)),
            max_messages_per_run=int(_float("CRAWL_TELEGRAM_MAX_MESSAGES", 20_000)),
        )

    @staticmethod
    def _credential(name: str) -> TelegramCredential:
        names, default = env_names(name), env_names(DEFAULT)
        pick = {f: names[f] if (f == "session" or os.environ.get(names[f])) else default[f] for f in names}
        return TelegramCredential(**{f: dg.EnvVar(var) for f, var in pick.items()})

    # -- what the collector uses --------------------------------------------------------------
    def client_settings(self) -> ClientSettings:
        return ClientSettings(
            request_interval=self.request_interval_seconds,
            flood_sleep_threshold=self.flood_sleep_threshold_seconds,
            network_retries=self.network_retries,
            network_backoff=self.network_backoff_seconds,
        )

    def budget(self) -> Budget:
        return Budget(max_pages=self.max_pages_per_run, max_messages=self.max_messages_per_run,
                      pages_per_batch=self.pages_per_checkpoint)

    def _factory(self) -> SenderFactory | None:
        if not self.sender_factory:
            return None
        module, _, attr = self.sender_factory.partition(":")
        return getattr(importlib.import_module(module), attr)

    def build_client(self, credential: str | None = None, last_request: float = 0.0) -> CrawlClient:
        """A new, unconnected client for one credential of the pool (``SourceGone`` if it is not configured)."""
        name = credential or self.default_credential
        cred = self.credentials.get(name)
        if cred is None:
            env = env_names(name)
            raise SourceGone(f"Telegram credential {name!r} is not configured: set {env['session']} "
                             f"(and {env['api_id']}/{env['api_hash']} unless the default app's are used)")
        try:
            api_id = int(cred.api_id)
        except ValueError:
            raise SourceGone(f"the api_id of Telegram credential {name!r} is not a number") from None
        factory = self._factory()
        return CrawlClient(credential=name, api_id=api_id, api_hash=cred.api_hash, session=cred.session,
                           settings=self.client_settings(), sender=factory(name) if factory else None,
                           last_request=last_request)

    @asynccontextmanager
    async def connected(self, credential: str | None = None) -> AsyncIterator[CrawlClient]:
        """A healthy, connected client holding its account's lock; disconnected and released afterwards."""
        name = credential or self.default_credential
        lock_dir = self.lock_dir or str(settings.dagster_home() / "locks")
        with AccountLock(lock_dir, name, self.account_wait_seconds) as lock:
            client = self.build_client(name, lock.last_request)
            try:
                await client.check_health()
                yield client
            finally:
                await client.disconnect()
                lock.last_request = client.pacer.last

    async def health(self, credential: str | None = None) -> dict[str, Any]:
        """Session-health check of one credential: ``{"credential", "ok", "user_id" | "reason"}``."""
        name = credential or self.default_credential
        try:
            async with self.connected(name) as client:
                return {"credential": name, "ok": True, "user_id": client._self_id}
        except SourceGone as exc:
            return {"credential": name, "ok": False, "reason": exc.reason}
