"""The X API v2 client: one ``httpx.Client``, pacing, retries and error sorting; no sync logic.

Every call returns a :class:`Page` holding the body exactly as received (it is what the lake stores)
plus its parsed JSON. Retries are a small hand-written loop rather than a library: the waits come from
three sources that interact (the server's reset time, the full-archive interval, backoff with jitter
for 5xx/timeouts) and the loop must count each kind apart for the run's metadata.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from crawl_assets.sources.bounded import MAX_RESPONSE_BYTES, BodyTooLarge, get_capped
from crawl_assets.sources.x.errors import (
    XError,
    XPermanentError,
    XRateLimitWait,
    XTransientError,
    bad_request,
    problem_text,
    resource_failure,
)
from crawl_assets.sources.x.fields import post_params
from crawl_assets.sources.x.ratelimit import Pacer

DEFAULT_BASE_URL = "https://api.x.com"
USER_BY_USERNAME = "users/by/username"
USER_TWEETS = "users/tweets"
SEARCH_RECENT = "search/recent"
SEARCH_ALL = "search/all"
TWEETS = "tweets"
TRANSIENT_STATUS = frozenset({408, 500, 502, 503, 504})


@dataclass(frozen=True)
class Page:
    """One response: ``body`` as received (bytes), ``json`` parsed from it."""

    endpoint: str
    body: bytes
    json: dict[str, Any]


@dataclass
class ClientStats:
    requests: Counter[str] = field(default_factory=Counter)
    rate_limit_wait_seconds: float = 0.0
    retries: int = 0
    throttled: int = 0  # 429 answers received

    def as_metadata(self) -> dict[str, Any]:
        return {"requests": sum(self.requests.values()), "requests_by_endpoint": dict(self.requests),
                "rate_limit_wait_seconds": round(self.rate_limit_wait_seconds, 3),
                "retries": self.retries, "http_429": self.throttled}


@dataclass(frozen=True)
class RetrySettings:
    """Bounds for waiting in place; beyond them the step ends and Dagster takes over."""

    max_retries: int = 4  # per request, for 5xx / timeouts / dropped connections / malformed bodies
    backoff_seconds: float = 2.0  # first backoff; doubles each retry, ±50 % jitter
    backoff_cap_seconds: float = 60.0
    max_inline_wait_seconds: float = 60.0  # longer rate-limit waits end the step with RetryRequested
    max_throttled: int = 3  # 429s per request before giving up in place
    default_429_wait_seconds: float = 60.0  # when a 429 carries no reset header
    full_archive_interval_seconds: float = 1.0
    reset_margin_seconds: float = 1.0


class XClient:
    """Calls X API v2 with one pooled ``httpx.Client`` (the caller owns and closes it)."""

    def __init__(self, http: httpx.Client, settings: RetrySettings | None = None, *,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time,
                 jitter: Callable[[], float] = random.random, max_response_bytes: int = MAX_RESPONSE_BYTES):
        self.http = http
        self.max_response_bytes = max_response_bytes
        self.settings = settings or RetrySettings()
        self.sleep = sleep
        self.jitter = jitter
        self.stats = ClientStats()
        self.pacer = Pacer(min_interval={SEARCH_ALL: self.settings.full_archive_interval_seconds},
                           margin=self.settings.reset_margin_seconds, clock=clock)

    # -- endpoints ---------------------------------------------------------------------------------
    def user_by_username(self, username: str) -> dict[str, Any]:
        """The user object of ``username``; unknown or suspended accounts are permanent errors."""
        page = self.get(USER_BY_USERNAME, f"/2/users/by/username/{username}", {})
        failure = resource_failure(page.json, USER_BY_USERNAME)
        if failure is not None:
            raise failure
        data = page.json.get("data")
        if not isinstance(data, dict) or not data.get("id"):
            raise XTransientError(f"{USER_BY_USERNAME}: answer without data.id", endpoint=USER_BY_USERNAME)
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

    # -- the request loop ----------------------------------------------------------------------------
    def get(self, endpoint: str, path: str, params: dict[str, Any]) -> Page:
        """GET with pacing and bounded retries; raises an ``XError`` subclass when it cannot answer."""
        s = self.settings
        failures = throttled = 0
        while True:
            self._pace(endpoint)
            self.stats.requests[endpoint] += 1
            self.pacer.sent(endpoint)
            try:
                resp, body = get_capped(self.http, "GET", path, self.max_response_bytes, params=params)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                problem = f"{type(exc).__name__}"
            except BodyTooLarge as exc:
                problem = str(exc)
            else:
                self.pacer.observe(endpoint, resp.headers)
                if resp.status_code == 200:
                    try:
                        parsed = orjson.loads(body)
                    except orjson.JSONDecodeError:
                        parsed = None
                    if isinstance(parsed, dict):
                        return Page(endpoint, body, parsed)
                    problem = "malformed JSON body"
                elif resp.status_code == 429:
                    self.stats.throttled += 1
                    throttled += 1
                    wait = self.pacer.throttled_wait(endpoint, resp.headers, s.default_429_wait_seconds)
                    if wait > s.max_inline_wait_seconds or throttled > s.max_throttled:
                        raise XRateLimitWait(f"{endpoint}: rate limited; window resets in {wait:.0f}s",
                                             seconds=wait, endpoint=endpoint)
                    continue
                elif resp.status_code in TRANSIENT_STATUS:
                    problem = f"HTTP {resp.status_code}"
                else:
                    raise self._refusal(endpoint, resp, body)
            failures += 1
            if failures > s.max_retries:
                raise XTransientError(f"{endpoint}: {problem} after {failures} attempts", endpoint=endpoint)
            self.stats.retries += 1
            delay = min(s.backoff_cap_seconds, s.backoff_seconds * 2 ** (failures - 1)) * (0.5 + self.jitter())
            self.sleep(delay)

    def _pace(self, endpoint: str) -> None:
        wait = self.pacer.wait_before(endpoint)
        if wait > self.settings.max_inline_wait_seconds:
            raise XRateLimitWait(f"{endpoint}: request budget spent; window resets in {wait:.0f}s",
                                 seconds=wait, endpoint=endpoint)
        if wait > 0:
            self.stats.rate_limit_wait_seconds += wait
            self.sleep(wait)

    @staticmethod
    def _refusal(endpoint: str, resp: httpx.Response, raw: bytes) -> XError:
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = {"detail": raw[:200].decode("utf-8", "replace")}
        if resp.status_code == 400:
            return bad_request(body, endpoint)
        reason = problem_text(body) or resp.reason_phrase
        if resp.status_code == 401:
            reason = f"token rejected (revoked or invalid): {reason}"
        return XPermanentError(f"{endpoint}: HTTP {resp.status_code} {reason}", endpoint=endpoint, status=resp.status_code)


def new_http_client(base_url: str, bearer_token: str, *, timeout_seconds: float = 30.0) -> httpx.Client:
    """The pooled HTTP client for one credential (keep-alive, timeouts, bearer auth)."""
    return httpx.Client(
        base_url=base_url.rstrip("/"),
        headers={"Authorization": f"Bearer {bearer_token}", "User-Agent": "crawl_assets"},
        timeout=httpx.Timeout(timeout_seconds, connect=min(10.0, timeout_seconds)),
        limits=httpx.Limits(max_connections=4, max_keepalive_connections=4),
    )
