"""``TelegramResource``: a pool of authorized Telegram accounts, each belonging to one tenant.

The registry names a credential (``credential: alice``); the account is looked up for *the entry's
tenant* (``CRAWL_TELEGRAM_SESSION__ACME__ALICE``, the scheme of ``crawl_assets.sdk.tenant_secrets``), so
no tenant can name another tenant's account. The secrets (``api_id``, ``api_hash``, the ``StringSession``
string) come only from environment variables through ``dg.EnvVar``, so run config, tags, metadata and logs
only ever show the variable names. ``api_id``/``api_hash`` identify the *app* (the operator's, registered
at my.telegram.org): a credential without its own falls back to its tenant's default app, then to
``CRAWL_TELEGRAM_API_ID``/``_API_HASH``; its proxy (``CRAWL_TELEGRAM_PROXY...``, a URL holding the proxy's
password or MTProxy secret) falls back the same way. Sessions never fall back. See docs/sources/telegram.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import dagster as dg
from pydantic import Field, PrivateAttr

from crawl_assets import settings
from crawl_assets.sources.telegram.errors import AccountBusy, SourceGone
from crawl_assets.sources.telegram.pacing import AccountLock, Clock, PaceNote
from crawl_assets.sources.telegram.options import RunLimits
from crawl_assets.sources.telegram.credentials import DEFAULT_TENANT, ENV_PREFIX, app_vars, env_names
from crawl_assets.sources.telegram.proxy import ProxyConfigError, ProxySpec, parse_proxy
from crawl_assets.sdk.tenant_secrets import credential_key, secrets_from_env

if TYPE_CHECKING:  # Telethon (~37 MiB) loads with the client, when a Telegram step builds one
    from crawl_assets.sources.telegram.client import ClientSettings, CrawlClient


class TelegramCredential(dg.Config):
    """One authorized account. Fill every field with ``dg.EnvVar``."""

    api_id: str = Field(description="The api_id of your app at my.telegram.org (EnvVar).")
    api_hash: str = Field(description="The api_hash of that app (EnvVar).", repr=False)
    session: str = Field(description="Telethon StringSession from `crawl-assets telegram login` (EnvVar).", repr=False)
    proxy: str = Field("", description="Proxy URL: socks5://, http:// (CONNECT) or mtproxy:// (EnvVar: it holds "
                       "the proxy's password or secret); empty: direct.", repr=False)


def proxy_var(tenant: str, credential: str | None, env: Mapping[str, str]) -> dict[str, Any]:
    """``{"proxy": EnvVar(...)}`` when a proxy variable of the credential's chain is set, else nothing."""
    var = app_vars(tenant, credential, "proxy", env)
    return {"proxy": dg.EnvVar(var)} if env.get(var) else {}


def credential_proxy(value: str, key: str) -> ProxySpec | None:
    """The proxy of credential ``key`` from its (secret) URL; a bad one is ``SourceGone`` naming no secret."""
    try:
        return parse_proxy(value, f"the proxy of Telegram credential {key!r} (CRAWL_TELEGRAM_PROXY...)")
    except ProxyConfigError as exc:
        raise SourceGone(str(exc)) from None


class TelegramResource(dg.ConfigurableResource):
    """Authorized accounts by credential name, and how gently they are used."""

    credentials: dict[str, TelegramCredential] = Field(
        default_factory=dict, description="Accounts by 'tenant:name' ('tenant:' is the tenant's default).")
    request_interval_seconds: float = Field(1.0, ge=0, description="Gap between two requests of one account with "
                                            "no flood wait in its recent history.")
    flood_backoff: float = Field(2.0, ge=1, description="After each FLOOD_WAIT the account's gap is multiplied by this.")
    pace_max_interval_seconds: float = Field(60.0, gt=0, description="The longest gap flood waits can lead to.")
    pace_recovery_half_life_seconds: float = Field(3600.0, ge=0, description="The gap added by flood waits halves "
                                                   "every this many seconds (0: at once).")
    account_requests_per_hour: int = Field(0, ge=0, description="Requests one account may send per clock hour, "
                                           "across its sources (0: no cap); the rest waits for the next hour.")
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
    web_base_url: str = Field("", description="Host of the web_channel kind's preview pages; empty means https://t.me.")
    web_request_interval_seconds: float = Field(2.0, ge=0, description="Minimum gap between two preview pages "
                                                "of a web_channel source.")
    web_timeout_seconds: float = Field(30.0, gt=0, description="Timeout of one preview page request.")

    _clock: Clock = PrivateAttr(default_factory=Clock)  # real time; a simulation sets its own (``with_clock``)

    def with_clock(self, clock: Clock) -> "TelegramResource":
        """This resource on another clock (simulated time for the pacing bench and tests)."""
        copy = self.model_copy()
        copy._clock = clock
        return copy

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "TelegramResource":
        """The pool from the environment: one account per set ``CRAWL_TELEGRAM_SESSION[__TENANT[__NAME]]``,
        with its app's ``api_id``/``api_hash`` (see ``app_vars``). Values stay ``EnvVar`` references;
        tunables set in the environment come as plain numbers (``settings.telegram_tunables``)."""
        env = settings.environment() if environ is None else environ
        creds: dict[str, TelegramCredential] = {}
        for found in secrets_from_env(f"{ENV_PREFIX}SESSION", env):
            tenant, name = found.tenant, found.name or None
            creds[credential_key(tenant, name)] = TelegramCredential(
                api_id=dg.EnvVar(app_vars(tenant, name, "api_id", env)),
                api_hash=dg.EnvVar(app_vars(tenant, name, "api_hash", env)),
                session=found.value, **proxy_var(tenant, name, env))
        return cls(credentials=creds, **settings.telegram_tunables(env))

    # -- what the collector uses --------------------------------------------------------------
    def client_settings(self) -> ClientSettings:
        from crawl_assets.sources.telegram.client import ClientSettings

        return ClientSettings(
            request_interval=self.request_interval_seconds,
            flood_sleep_threshold=self.flood_sleep_threshold_seconds,
            network_retries=self.network_retries,
            network_backoff=self.network_backoff_seconds,
            flood_backoff=self.flood_backoff,
            max_interval=self.pace_max_interval_seconds,
            recovery_half_life=self.pace_recovery_half_life_seconds,
            requests_per_hour=self.account_requests_per_hour,
        )

    def budget(self) -> RunLimits:
        return RunLimits(max_pages=self.max_pages_per_run, max_messages=self.max_messages_per_run,
                      pages_per_batch=self.pages_per_checkpoint)

    def build_client(self, tenant: str, credential: str | None = None, note: PaceNote | None = None) -> CrawlClient:
        """A new, unconnected client for one of ``tenant``'s accounts (``SourceGone`` if it is not configured)."""
        key = credential_key(tenant, credential)
        cred = self.credentials.get(key)
        if cred is None:
            env = env_names(tenant, credential)
            what = f"credential {credential!r}" if credential else "the default credential"
            raise SourceGone(f"Telegram {what} of tenant {tenant!r} is not configured: set {env['session']} "
                             f"(and {env['api_id']}/{env['api_hash']} unless the default app's are used)")
        try:
            api_id = int(cred.api_id)
        except ValueError:
            raise SourceGone(f"the api_id of Telegram credential {key!r} is not a number") from None
        from crawl_assets.sources.telegram.client import CrawlClient

        return CrawlClient(credential=key, api_id=api_id, api_hash=cred.api_hash, session=cred.session,
                           settings=self.client_settings(), note=note, clock=self._clock,
                           proxy=credential_proxy(cred.proxy, key))

    def accounts_for(self, tenant: str, credential: str | None, source: str = "") -> list[str | None]:
        """The accounts a source may use, best first: the one it names, or, naming none, every account of its
        tenant's pool (its default and its named ones) in the source's own stable order (rendezvous hashing:
        each source keeps its account while the pool stays, and the pool's sources spread evenly)."""
        prefix = f"{tenant}:"
        pool = [key[len(prefix):] or None for key in self.credentials if key.startswith(prefix)]
        if credential is not None or len(pool) <= 1:
            return [credential if credential is not None or not pool else pool[0]]
        return sorted(pool, key=lambda name: hashlib.sha256(f"{source}\0{name or ''}".encode()).digest())

    def _take_account(self, lock_dir: str, tenant: str, order: list[str | None]) -> AccountLock:
        """The lock of the first account of ``order`` that is free and not resting from a long flood wait; when
        there is none, the first one's, waited for (its pace then says whether the run may go on)."""
        if len(order) > 1:
            now = self._clock.now()
            for name in order:
                try:
                    lock = AccountLock(lock_dir, tenant, name, 0).__enter__()
                except AccountBusy:
                    continue
                if lock.note.rest_until - now <= self.flood_sleep_threshold_seconds:
                    return lock
                lock.release()
        return AccountLock(lock_dir, tenant, order[0], self.account_wait_seconds).__enter__()

    @asynccontextmanager
    async def connected(self, tenant: str, credential: str | None = None, source: str = "") -> AsyncIterator[CrawlClient]:
        """A healthy, connected client holding its account's lock (``accounts_for``: ``source`` spreads the
        sources naming no credential over the tenant's pool); disconnected and released afterwards, with the
        account's pace kept for its next run."""
        lock_dir = self.lock_dir or str(settings.dagster_home() / "locks")
        lock = self._take_account(lock_dir, tenant, self.accounts_for(tenant, credential, source))
        try:
            client = self.build_client(tenant, lock.name, lock.note)
            try:
                await client.check_health()
                yield client
            finally:
                await client.disconnect()
                lock.note = client.pacer.note
        finally:
            lock.release()

    async def health(self, tenant: str = DEFAULT_TENANT, credential: str | None = None) -> dict[str, Any]:
        """Session-health check of one account: ``{"credential", "ok", "user_id" | "reason"}``."""
        key = credential_key(tenant, credential)
        try:
            async with self.connected(tenant, credential) as client:
                return {"credential": key, "ok": True, "user_id": client.user_id}
        except SourceGone as exc:
            return {"credential": key, "ok": False, "reason": exc.reason}
