"""The X API v2 client: its endpoints on the shared request loop (``crawl_assets.sdk.http``); no sync logic.

X differs from the other APIs in data only: its answer rules (``crawl_assets.sources.x.rules``), a rate-limit
window per endpoint (``x-rate-limit-*``, and the daily caps a 429 may name), full-archive search held to a
minimum interval, and slower default backoff.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import httpx

from crawl_assets.sdk.errors import ErrorRules, TransientError
from crawl_assets.sdk.http import EndpointWindows, HttpClient, Page, Pacing, RateHeaders, RetrySettings
from crawl_assets.sdk.http import new_http_client as _new_http_client
from crawl_assets.sources.x.fields import post_params
from crawl_assets.sources.x.rules import X_RULES, resource_failure

DEFAULT_BASE_URL = "https://api.x.com"
USER_BY_USERNAME = "users/by/username"
USER_TWEETS = "users/tweets"
SEARCH_RECENT = "search/recent"
SEARCH_ALL = "search/all"
TWEETS = "tweets"
RATE_PREFIX = "x-rate-limit"  # x-rate-limit-remaining / -reset (epoch seconds), per endpoint and token
DAILY_PREFIXES = ("x-app-limit-24hour", "x-user-limit-24hour")  # caps a 429 may name


@dataclass(frozen=True)
class XRetrySettings(RetrySettings):
    """X's defaults, and the minimum interval between full-archive searches (X allows one per second)."""

    backoff_seconds: float = 2.0
    default_429_wait_seconds: float = 60.0
    reset_margin_seconds: float = 1.0
    full_archive_interval_seconds: float = 1.0


class XClient(HttpClient):
    """Calls X API v2 with one pooled ``httpx.Client`` (the caller owns and closes it)."""

    RULES: ClassVar[ErrorRules] = X_RULES
    settings: XRetrySettings

    def __init__(self, http: httpx.Client, settings: XRetrySettings | None = None, **kwargs: Any):
        super().__init__(http, settings=settings or XRetrySettings(), **kwargs)

    def pacing(self, rate: RateHeaders) -> Pacing:
        return EndpointWindows(prefix=RATE_PREFIX, throttle_prefixes=DAILY_PREFIXES,
                               min_interval={SEARCH_ALL: self.settings.full_archive_interval_seconds},
                               margin=self.settings.reset_margin_seconds, clock=self.clock)

    # -- endpoints ---------------------------------------------------------------------------------
    def user_by_username(self, username: str) -> dict[str, Any]:
        """The user object of ``username``; unknown or suspended accounts are permanent errors."""
        page = self.get(USER_BY_USERNAME, f"/2/users/by/username/{username}", {})
        failure = resource_failure(page.json, USER_BY_USERNAME)
        if failure is not None:
            raise failure
        data = page.json.get("data")
        if not isinstance(data, dict) or not data.get("id"):
            raise TransientError(f"{USER_BY_USERNAME}: answer without data.id", endpoint=USER_BY_USERNAME)
        return data

    def posts(self, endpoint: str, path: str, params: dict[str, Any]) -> Page:
        """One page of posts with the contract's expansions and fields."""
        page = self.get(endpoint, path, {**post_params(), **params})
        failure = resource_failure(page.json, endpoint) if endpoint == USER_TWEETS else None
        if failure is not None:
            raise failure
        return page

    def lookup(self, ids: list[str]) -> Page:
        """Posts by id (at most 100 per call); missing ones come back in ``errors``."""
        if not 0 < len(ids) <= 100:
            raise ValueError(f"lookup takes 1-100 ids, got {len(ids)}")
        return self.get(TWEETS, "/2/tweets", {**post_params(), "ids": ",".join(ids)})


def new_http_client(base_url: str, bearer_token: str, *, timeout_seconds: float = 30.0) -> httpx.Client:
    """The pooled HTTP client for one credential (keep-alive, timeouts, bearer auth; no Accept header)."""
    return _new_http_client(base_url, headers={"Authorization": f"Bearer {bearer_token}"},
                            timeout_seconds=timeout_seconds, accept=None)
