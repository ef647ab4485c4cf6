"""``XResource``: X API credentials per tenant (from ``EnvVar``) and client settings, one pooled client per
credential.

Environment (see docs/sources/x.md): ``CRAWL_X_BEARER_TOKEN[__TENANT[__NAME]]``, the scheme every platform
uses (``crawl_assets.sdk.tenant_secrets``): a source of tenant ``acme`` naming ``credential: research``
reads ``CRAWL_X_BEARER_TOKEN__ACME__RESEARCH`` and never another tenant's token; ``CRAWL_X_BEARER_TOKEN``
alone is the default credential of tenant ``default``. ``CRAWL_X_BASE_URL`` points the client at another
host (a proxy, or the local stand-in in tests).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import dagster as dg
from pydantic import Field, PrivateAttr

from crawl_assets import settings
from crawl_assets.sdk.tenant_secrets import (
    MissingCredential,
    TenantSecret,
    credential_key,
    pick_secret,
    secret_var,
    secrets_from_env,
)
from crawl_assets.sources.x.client import DEFAULT_BASE_URL, XClient, XRetrySettings, new_http_client
from crawl_assets.sources.x.spec import TOKEN_BASE

_LEGACY_NAMED = re.compile(r"CRAWL_X_([A-Z0-9_]+)_BEARER_TOKEN")  # before tokens were per tenant

__all__ = ["MissingCredential", "TOKEN_BASE", "XResource", "token_var"]


def token_var(tenant: str, name: str | None) -> str:
    """The environment variable holding ``tenant``'s credential ``name`` (None: the tenant's default)."""
    return secret_var(TOKEN_BASE, tenant, name)


class XResource(dg.ConfigurableResource):
    """X API v2 access for ``x_posts_raw``: bearer tokens by (tenant, name), and how hard to try."""

    base_url: str = Field(DEFAULT_BASE_URL, description="API root; the tests point it at a local stand-in.")
    secrets: list[TenantSecret] = Field(default_factory=list, description="App-only bearer tokens per tenant; use EnvVar.")
    timeout_seconds: float = Field(30.0, gt=0, description="Per-request timeout.")
    max_retries: int = Field(4, ge=0, description="In-place retries of a request on 5xx, timeouts, broken bodies.")
    backoff_seconds: float = Field(2.0, ge=0, description="First retry delay; doubles per retry, ±50% jitter.")
    max_inline_wait_seconds: float = Field(
        60.0, ge=0, description="Longest rate-limit wait slept in place; longer ends the step with RetryRequested.")
    reset_margin_seconds: float = Field(1.0, ge=0, description="Added to x-rate-limit-reset before asking again.")
    full_archive_interval_seconds: float = Field(1.0, ge=0, description="Minimum gap between full-archive requests.")
    max_pages_per_run: int = Field(500, gt=0, description="Pages of posts one run may fetch; the rest resumes next run.")
    max_run_seconds: float = Field(3000.0, gt=0, description="No new request starts after this long in one run.")
    max_rate_limit_retries: int = Field(5, ge=0, description="RetryRequested retries of a step waiting for a reset.")

    _clients: dict[str, XClient] = PrivateAttr(default_factory=dict)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "XResource":
        """Built from every ``CRAWL_X_BEARER_TOKEN[__TENANT[__NAME]]`` and ``CRAWL_X_BASE_URL``; tokens stay
        ``EnvVar``s so their values never enter run config."""
        env = settings.environment() if environ is None else environ
        return cls(secrets=secrets_from_env(TOKEN_BASE, env), **settings.source_tunables("CRAWL_X", ("base_url",), env))

    def _token(self, tenant: str, name: str | None) -> str:
        try:
            return pick_secret(self.secrets, TOKEN_BASE, tenant, name)
        except MissingCredential as exc:
            legacy = f"CRAWL_X_{name.upper()}_BEARER_TOKEN" if name else ""
            if legacy and _LEGACY_NAMED.fullmatch(legacy) and settings.environment().get(legacy):
                raise MissingCredential(f"{exc} ({legacy} is no longer read: X tokens belong to one tenant)") from None
            raise

    def retry_settings(self) -> XRetrySettings:
        return XRetrySettings(
            max_retries=self.max_retries,
            backoff_seconds=self.backoff_seconds,
            max_inline_wait_seconds=self.max_inline_wait_seconds,
            reset_margin_seconds=self.reset_margin_seconds,
            full_archive_interval_seconds=self.full_archive_interval_seconds,
        )

    def client(self, tenant: str, credential: str | None = None) -> XClient:
        """The client of ``tenant``'s ``credential`` (None: its default), created once and reused for the run."""
        key = credential_key(tenant, credential)
        if key not in self._clients:
            http = new_http_client(self.base_url, self._token(tenant, credential), timeout_seconds=self.timeout_seconds)
            self._clients[key] = XClient(http, self.retry_settings())
        return self._clients[key]

    def close(self) -> None:
        for client in self._clients.values():
            client.http.close()
        self._clients.clear()

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        self.close()
