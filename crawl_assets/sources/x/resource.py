"""``XResource``: X API credentials (from ``EnvVar``) and client settings, one pooled client per credential.

Environment (see docs/sources/x.md): ``CRAWL_X_BEARER_TOKEN`` is the default credential;
``CRAWL_X_<NAME>_BEARER_TOKEN`` is the credential a registry entry names with ``credential: <name>``
(lowercase in the registry, uppercase in the variable); ``CRAWL_X_BASE_URL`` points the client at
another host (a proxy, or the local stand-in in tests).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import dagster as dg
from pydantic import Field, PrivateAttr

from crawl_assets.sources.x.client import DEFAULT_BASE_URL, RetrySettings, XClient, new_http_client

DEFAULT_TOKEN_VAR = "CRAWL_X_BEARER_TOKEN"
NAMED_TOKEN_VAR = re.compile(r"^CRAWL_X_([A-Z0-9_]+)_BEARER_TOKEN$")


class XCredential(dg.Config):
    """A named bearer token (app-only OAuth 2). Fill ``bearer_token`` with ``dg.EnvVar``."""

    name: str = Field(description="The name registry entries use in 'credential'.")
    bearer_token: str = Field(description="App-only bearer token; use EnvVar.")


class MissingCredential(LookupError):
    """A source names a credential the resource does not hold."""


def token_var(name: str | None) -> str:
    """The environment variable holding credential ``name`` (None: the default credential)."""
    return DEFAULT_TOKEN_VAR if not name else f"CRAWL_X_{name.upper()}_BEARER_TOKEN"


def _plain(value: Any) -> str:
    """A secret's value whether it came resolved (inside a run) or as an ``EnvVar`` (outside one)."""
    return value.get_value() or "" if isinstance(value, dg.EnvVar) else str(value or "")


class XResource(dg.ConfigurableResource):
    """X API v2 access for ``x_posts_raw``: a pool of bearer tokens by name, and how hard to try."""

    base_url: str = Field(DEFAULT_BASE_URL, description="API root; the tests point it at a local stand-in.")
    bearer_token: str = Field("", description="Default credential (sources without 'credential'); use EnvVar.")
    credentials: list[XCredential] = Field(default_factory=list, description="Named credentials.")
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
        """Built from ``CRAWL_X_BEARER_TOKEN``, every ``CRAWL_X_<NAME>_BEARER_TOKEN`` and ``CRAWL_X_BASE_URL``;
        tokens stay ``EnvVar``s so their values never enter run config."""
        env = os.environ if environ is None else environ
        named = sorted(
            (m.group(1).lower(), key) for key in env if (m := NAMED_TOKEN_VAR.match(key)) and env.get(key)
        )
        return cls(
            base_url=env.get("CRAWL_X_BASE_URL") or DEFAULT_BASE_URL,
            bearer_token=dg.EnvVar(DEFAULT_TOKEN_VAR) if env.get(DEFAULT_TOKEN_VAR) else "",
            credentials=[XCredential(name=name, bearer_token=dg.EnvVar(key)) for name, key in named],
        )

    def credential_names(self) -> list[str]:
        """Names this resource can serve ('' is the default credential)."""
        return ([""] if self.bearer_token else []) + [c.name for c in self.credentials]

    def _token(self, name: str | None) -> str:
        if not name:
            token = _plain(self.bearer_token)
        else:
            token = next((_plain(c.bearer_token) for c in self.credentials if c.name == name), "")
        if not token:
            what = f"credential {name!r}" if name else "the default X credential"
            raise MissingCredential(f"{what} is not configured: set the environment variable {token_var(name)}")
        return token

    def retry_settings(self) -> RetrySettings:
        return RetrySettings(
            max_retries=self.max_retries,
            backoff_seconds=self.backoff_seconds,
            max_inline_wait_seconds=self.max_inline_wait_seconds,
            reset_margin_seconds=self.reset_margin_seconds,
            full_archive_interval_seconds=self.full_archive_interval_seconds,
        )

    def client(self, credential: str | None = None) -> XClient:
        """The client of ``credential`` (None: default), created once and reused for the whole run."""
        key = credential or ""
        if key not in self._clients:
            http = new_http_client(self.base_url, self._token(credential), timeout_seconds=self.timeout_seconds)
            self._clients[key] = XClient(http, self.retry_settings())
        return self._clients[key]

    def close(self) -> None:
        for client in self._clients.values():
            client.http.close()
        self._clients.clear()

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        self.close()
