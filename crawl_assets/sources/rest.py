"""A JSON-over-HTTP client shared by the REST sources (Discourse, Google Play, Intercom, Hacker News).

One ``httpx.Client`` per credential, pacing from the API's own rate-limit headers (so a sync waits
*before* it is throttled), bounded retries with backoff and jitter for 5xx/timeouts/broken bodies, and
one vocabulary of errors the Dagster glue (``crawl_assets.sources.pull``) turns into actions:

- ``PermanentError``: retrying cannot help (401/403/404/410, a refused request) → pause the source;
- ``RateLimitWait``: the server wants a wait longer than we sleep in place → ``RetryRequested``;
- ``TransientError``: retries ran out on 5xx/timeouts → the asset's retry policy.

Every answer comes back as a :class:`Page`: the body exactly as received plus its parsed JSON.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx
import orjson

from crawl_assets.sources.bounded import MAX_RESPONSE_BYTES, BodyTooLarge, get_capped

TRANSIENT_STATUS = frozenset({408, 500, 502, 503, 504})
PERMANENT_STATUS = frozenset({400, 401, 403, 404, 405, 410, 422})


class SourceError(Exception):
    """Any failure of an API call; the message names the endpoint, never a secret."""

    def __init__(self, message: str, *, endpoint: str = "", status: int | None = None):
        super().__init__(message)
        self.endpoint = endpoint
        self.status = status


class PermanentError(SourceError):
    """Credentials revoked, no access, the thing is gone, or the request itself is refused."""


class TransientError(SourceError):
    """Server errors, timeouts or malformed bodies that outlasted the in-place retries."""


class RateLimitWait(SourceError):
    """The rate-limit window resets later than we are willing to sleep in place."""

    def __init__(self, message: str, *, seconds: float, endpoint: str = ""):
        super().__init__(message, endpoint=endpoint, status=429)
        self.seconds = seconds


@dataclass(frozen=True)
class Page:
    """One response: ``body`` as received, ``json`` parsed from it."""

    endpoint: str
    body: bytes
    json: Any


@dataclass(frozen=True)
class RateHeaders:
    """Where an API tells its budget. ``reset_kind``: ``epoch`` seconds, ``delta`` seconds or ``iso`` instant."""

    remaining: str | None = None
    reset: str | None = None
    reset_kind: str = "epoch"
    retry_after: str = "retry-after"
    low_watermark: int = 0  # wait for the reset once remaining <= this (proactive throttling)


@dataclass(frozen=True)
class RetrySettings:
    """Bounds for waiting in place; beyond them the step ends and Dagster takes over."""

    max_retries: int = 4
    backoff_seconds: float = 1.0
    backoff_cap_seconds: float = 60.0
    max_inline_wait_seconds: float = 60.0
    max_throttled: int = 3
    default_429_wait_seconds: float = 30.0
    reset_margin_seconds: float = 0.5


@dataclass
class ClientStats:
    requests: Counter[str] = field(default_factory=Counter)
    rate_limit_wait_seconds: float = 0.0
    retries: int = 0
    throttled: int = 0

    def as_metadata(self) -> dict[str, Any]:
        return {"requests": sum(self.requests.values()), "requests_by_endpoint": dict(self.requests),
                "rate_limit_wait_seconds": round(self.rate_limit_wait_seconds, 3),
                "retries": self.retries, "http_429": self.throttled}


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _reset_at(value: str | None, kind: str, now: float) -> float | None:
    """The epoch second a window resets, from one header value."""
    if value is None:
        return None
    if kind == "iso":
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    number = _number(value)
    if number is None:
        return None
    return now + number if kind == "delta" else number


class RestClient:
    """Calls one JSON API with pacing and bounded retries (the caller owns and closes ``http``).

    ``auth`` returns extra headers per request (a refreshed OAuth token); after a 401 it is called
    once more with ``refresh=True`` before the 401 counts as permanent.
    """

    def __init__(self, http: httpx.Client, *, api: str, settings: RetrySettings | None = None,
                 rate: RateHeaders | None = None, auth: Callable[[bool], Mapping[str, str]] | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time,
                 jitter: Callable[[], float] = random.random, max_response_bytes: int = MAX_RESPONSE_BYTES):
        self.http = http
        self.api = api
        self.max_response_bytes = max_response_bytes
        self.settings = settings or RetrySettings()
        self.rate = rate or RateHeaders()
        self.auth = auth
        self.sleep, self.clock, self.jitter = sleep, clock, jitter
        self.stats = ClientStats()
        self._resume_at = 0.0  # epoch second before which no request goes out (budget spent)

    def get(self, endpoint: str, path: str, params: Any = None) -> Page:
        return self.request("GET", endpoint, path, params=params)

    def post(self, endpoint: str, path: str, body: Any) -> Page:
        return self.request("POST", endpoint, path, json=body)

    def request(self, method: str, endpoint: str, path: str, *, params: Any = None, json: Any = None,
                form: Mapping[str, str] | None = None) -> Page:
        """One call, paced and retried; raises a ``SourceError`` subclass when it cannot answer."""
        s = self.settings
        failures = throttled = 0
        refreshed = False
        while True:
            self._pace(endpoint)
            self.stats.requests[endpoint] += 1
            headers = dict(self.auth(refreshed)) if self.auth else {}
            try:
                resp, body = get_capped(self.http, method, path, self.max_response_bytes, params=params, json=json,
                                        data=form, headers=headers)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                problem = type(exc).__name__
            except BodyTooLarge as exc:
                problem = str(exc)
            else:
                self._observe(resp.headers)
                status = resp.status_code
                if 200 <= status < 300:
                    try:
                        return Page(endpoint, body, orjson.loads(body) if body else None)
                    except orjson.JSONDecodeError:
                        problem = "malformed JSON body"
                elif status == 429:
                    self.stats.throttled += 1
                    throttled += 1
                    wait = self._throttled_wait(resp)
                    if wait > s.max_inline_wait_seconds or throttled > s.max_throttled:
                        raise RateLimitWait(f"{self.api} {endpoint}: rate limited; retry in {wait:.0f}s",
                                            seconds=wait, endpoint=endpoint)
                    self._wait(wait)
                    continue
                elif status == 401 and self.auth is not None and not refreshed:
                    refreshed = True
                    continue
                elif status in TRANSIENT_STATUS:
                    problem = f"HTTP {status}"
                else:
                    raise PermanentError(f"{self.api} {endpoint}: HTTP {status} {refusal_text(resp, body)}",
                                         endpoint=endpoint, status=status)
            failures += 1
            if failures > s.max_retries:
                raise TransientError(f"{self.api} {endpoint}: {problem} after {failures} attempts", endpoint=endpoint)
            self.stats.retries += 1
            self.sleep(min(s.backoff_cap_seconds, s.backoff_seconds * 2 ** (failures - 1)) * (0.5 + self.jitter()))

    # -- pacing -------------------------------------------------------------------------------------
    def _observe(self, headers: Mapping[str, str]) -> None:
        """Remember when the window resets once the budget is (nearly) spent."""
        if not self.rate.remaining:
            return
        remaining = _number(headers.get(self.rate.remaining))
        reset = _reset_at(headers.get(self.rate.reset or ""), self.rate.reset_kind, self.clock())
        if remaining is not None and reset is not None and remaining <= self.rate.low_watermark:
            self._resume_at = max(self._resume_at, reset + self.settings.reset_margin_seconds)

    def _throttled_wait(self, resp: httpx.Response) -> float:
        now = self.clock()
        after = _number(resp.headers.get(self.rate.retry_after))
        reset = _reset_at(resp.headers.get(self.rate.reset or ""), self.rate.reset_kind, now) if self.rate.reset else None
        if after is not None:
            return max(after, 0.0)
        if reset is not None:
            return max(reset + self.settings.reset_margin_seconds - now, 0.0)
        return self.settings.default_429_wait_seconds

    def _pace(self, endpoint: str) -> None:
        wait = self._resume_at - self.clock()
        if wait > self.settings.max_inline_wait_seconds:
            raise RateLimitWait(f"{self.api} {endpoint}: request budget spent; window resets in {wait:.0f}s",
                                seconds=wait, endpoint=endpoint)
        if wait > 0:
            self._wait(wait)

    def _wait(self, seconds: float) -> None:
        self.stats.rate_limit_wait_seconds += seconds
        self.sleep(seconds)


def refusal_text(resp: httpx.Response, raw: bytes) -> str:
    """A short reason from an error body (``errors``/``message``/``error``), bounded in length."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw[:200].decode("utf-8", "replace")
    parts: list[str] = []
    if isinstance(body, dict):
        for key in ("errors", "error", "message", "error_description", "detail"):
            value = body.get(key)
            if isinstance(value, list):
                parts += [str(v.get("message") if isinstance(v, dict) else v) for v in value[:3]]
            elif isinstance(value, dict):
                parts.append(str(value.get("message") or value.get("status") or ""))
            elif value:
                parts.append(str(value))
    return " ".join(p for p in parts if p)[:300] or resp.reason_phrase


def new_http_client(base_url: str, *, headers: Mapping[str, str] | None = None,
                    timeout_seconds: float = 30.0) -> httpx.Client:
    """The pooled HTTP client of one credential (keep-alive, timeouts, fixed headers)."""
    return httpx.Client(
        base_url=base_url.rstrip("/"),
        headers={"User-Agent": "crawl_assets", "Accept": "application/json", **(headers or {})},
        timeout=httpx.Timeout(timeout_seconds, connect=min(10.0, timeout_seconds)),
        limits=httpx.Limits(max_connections=4, max_keepalive_connections=4),
    )
