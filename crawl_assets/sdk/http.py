"""The one request loop every HTTP source uses: pacing, bounded retries with backoff and jitter, capped body
reads, and answers sorted by the API's :class:`~crawl_assets.sdk.errors.ErrorRules`.

Every answer comes back as a :class:`Page`: the body exactly as received (what the lake stores) plus its
parsed JSON. The loop is hand-written rather than a retry library's: its waits come from three sources that
interact (the server's reset time, minimum intervals, backoff with jitter), it chooses between sleeping in
place and ending the step (``RateLimitWait``), and it counts each kind apart for the run's metadata.

Bodies are read bounded (a source is not trusted to send a reasonable amount of data): a body is streamed and
abandoned as soon as it passes the cap (a declared Content-Length over the cap is refused before reading
anything); the cap applies to the decoded bytes, so a compressed body cannot expand past it either.

Pacing (waiting *before* a request the API would throttle, and how long a 429 asks to wait) is a strategy:

- :class:`HeaderBudget`: one budget for the whole API, from its ``remaining``/``reset`` headers (names and
  reset encoding are data: :class:`RateHeaders`); after a 429 the client sleeps what ``Retry-After`` or the
  reset says.
- :class:`EndpointWindows`: a window per endpoint (``<prefix>-remaining``/``-reset``, epoch seconds), minimum
  intervals per endpoint, and extra windows a 429 may name (X's daily caps); after a 429 the exhausted window
  holds the next request.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Protocol

import httpx
import orjson

from crawl_assets.sdk.errors import BadRequest, ErrorRules, PermanentError, RateLimitWait, SourceError, TransientError

MAX_RESPONSE_BYTES = 16 << 20  # far above any page the supported APIs send


class BodyTooLarge(Exception):
    """A response body over the cap (the message says how much was allowed)."""


def read_capped(resp: httpx.Response, cap: int = MAX_RESPONSE_BYTES) -> bytes:
    """The (decoded) body of a streamed response, or ``BodyTooLarge`` once it passes ``cap`` bytes."""
    declared = resp.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise BodyTooLarge(f"response body of {declared} bytes is over the {cap}-byte limit")
    chunks: list[bytes] = []
    size = 0
    for chunk in resp.iter_bytes():
        size += len(chunk)
        if size > cap:
            raise BodyTooLarge(f"response body over the {cap}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks)


def get_capped(http: httpx.Client, method: str, path: str, cap: int = MAX_RESPONSE_BYTES,
               **kwargs: object) -> tuple[httpx.Response, bytes]:
    """One request whose body is read under ``cap``: (the response, for its status and headers; its body)."""
    with http.stream(method, path, **kwargs) as resp:  # type: ignore[arg-type]
        return resp, read_capped(resp, cap)


_MALFORMED = object()


@dataclass(frozen=True)
class Page:
    """One response: ``body`` as received, ``json`` parsed from it."""

    endpoint: str
    body: bytes
    json: Any


@dataclass(frozen=True)
class RetrySettings:
    """Bounds for waiting in place; beyond them the step ends and Dagster takes over."""

    max_retries: int = 4  # per request, for 5xx / timeouts / dropped connections / malformed bodies
    backoff_seconds: float = 1.0  # first backoff; doubles each retry, ±50 % jitter
    backoff_cap_seconds: float = 60.0
    max_inline_wait_seconds: float = 60.0  # longer rate-limit waits end the step with RateLimitWait
    max_throttled: int = 3  # 429s per request before giving up in place
    default_429_wait_seconds: float = 30.0  # when a 429 says nothing about when to come back
    reset_margin_seconds: float = 0.5


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


# -- pacing ---------------------------------------------------------------------------------------------------
class Pacing(Protocol):
    sleeps_after_throttle: bool  # the client sleeps a 429's wait itself (else ``wait_before`` holds the next request)

    def wait_before(self, endpoint: str) -> float: ...
    def sent(self, endpoint: str) -> None: ...
    def observe(self, endpoint: str, headers: Mapping[str, str]) -> None: ...
    def throttled_wait(self, endpoint: str, headers: Mapping[str, str], default: float) -> float: ...


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


@dataclass(frozen=True)
class RateHeaders:
    """Where an API tells its budget. ``reset_kind``: ``epoch`` seconds, ``delta`` seconds or ``iso`` instant."""

    remaining: str | None = None
    reset: str | None = None
    reset_kind: str = "epoch"
    retry_after: str = "retry-after"
    low_watermark: int = 0  # wait for the reset once remaining <= this (proactive throttling)


class HeaderBudget:
    """One budget for the API: no request goes out before the reset once it is (nearly) spent."""

    sleeps_after_throttle = True

    def __init__(self, rate: RateHeaders, *, margin: float, clock: Callable[[], float] = time.time):
        self.rate, self.margin, self.clock = rate, margin, clock
        self.resume_at = 0.0  # epoch second before which no request goes out (budget spent)

    def wait_before(self, endpoint: str) -> float:
        return self.resume_at - self.clock()

    def sent(self, endpoint: str) -> None:
        pass

    def observe(self, endpoint: str, headers: Mapping[str, str]) -> None:
        """Remember when the window resets once the budget is (nearly) spent."""
        if not self.rate.remaining:
            return
        remaining = _number(headers.get(self.rate.remaining))
        reset = _reset_at(headers.get(self.rate.reset or ""), self.rate.reset_kind, self.clock())
        if remaining is not None and reset is not None and remaining <= self.rate.low_watermark:
            self.resume_at = max(self.resume_at, reset + self.margin)

    def throttled_wait(self, endpoint: str, headers: Mapping[str, str], default: float) -> float:
        now = self.clock()
        after = _number(headers.get(self.rate.retry_after))
        reset = _reset_at(headers.get(self.rate.reset or ""), self.rate.reset_kind, now) if self.rate.reset else None
        if after is not None:
            return max(after, 0.0)
        if reset is not None:
            return max(reset + self.margin - now, 0.0)
        return default


@dataclass
class Window:
    remaining: int
    reset: float  # epoch seconds


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class EndpointWindows:
    """A budget per endpoint as the last response reported it, and the time of each endpoint's last request."""

    sleeps_after_throttle = False

    def __init__(self, *, prefix: str, throttle_prefixes: tuple[str, ...] = (),
                 min_interval: Mapping[str, float] | None = None, margin: float = 1.0,
                 clock: Callable[[], float] = time.time):
        self.prefix = prefix  # "<prefix>-remaining" / "<prefix>-reset" on every response
        self.throttle_prefixes = (prefix, *throttle_prefixes)  # windows a 429 may name as exhausted
        self.min_interval = dict(min_interval or {})
        self.margin = margin
        self.clock = clock
        self.windows: dict[str, Window] = {}
        self.last_request: dict[str, float] = {}

    def wait_before(self, endpoint: str) -> float:
        """Seconds to wait before the next request to ``endpoint`` (0 when it may go now)."""
        now = self.clock()
        wait = 0.0
        window = self.windows.get(endpoint)
        if window is not None and window.remaining <= 0 and window.reset + self.margin > now:
            wait = window.reset + self.margin - now
        interval = self.min_interval.get(endpoint)
        if interval and endpoint in self.last_request:
            wait = max(wait, self.last_request[endpoint] + interval - now)
        return max(wait, 0.0)

    def sent(self, endpoint: str) -> None:
        self.last_request[endpoint] = self.clock()

    def observe(self, endpoint: str, headers: Mapping[str, str]) -> None:
        """Remember the budget a response reports (responses without the headers change nothing)."""
        remaining = _int(headers.get(f"{self.prefix}-remaining"))
        reset = _int(headers.get(f"{self.prefix}-reset"))
        if remaining is not None and reset is not None:
            self.windows[endpoint] = Window(remaining, float(reset))

    def throttled_wait(self, endpoint: str, headers: Mapping[str, str], default: float) -> float:
        """After a 429: seconds until the exhausted window (per-endpoint or a named cap) resets."""
        now = self.clock()
        resets = []
        for prefix in self.throttle_prefixes:
            remaining = _int(headers.get(f"{prefix}-remaining"))
            reset = _int(headers.get(f"{prefix}-reset"))
            if reset is not None and (remaining is None or remaining <= 0):
                resets.append(float(reset))
        if not resets:
            self.windows[endpoint] = Window(0, now + default)
            return default
        reset = max(resets)
        self.windows[endpoint] = Window(0, reset)
        return max(reset + self.margin - now, 0.0)


# -- the request loop ---------------------------------------------------------------------------------------
class HttpClient:
    """Calls one JSON API with pacing and bounded retries (the caller owns and closes ``http``).

    A platform's client subclasses it with one method per endpoint; ``RULES`` and :meth:`pacing` are where
    its API differs. ``api`` prefixes every error message (``"intercom conversations/get: HTTP 404 ..."``).
    ``auth`` returns extra headers per request (a refreshed OAuth token); after a status in
    ``RULES.refresh_auth_on`` it is called once more with ``refresh=True`` before the status counts.
    """

    RULES: ClassVar[ErrorRules] = ErrorRules()

    def __init__(self, http: httpx.Client, *, api: str = "", settings: RetrySettings | None = None,
                 rate: RateHeaders | None = None, auth: Callable[[bool], Mapping[str, str]] | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time,
                 jitter: Callable[[], float] = random.random, max_response_bytes: int = MAX_RESPONSE_BYTES):
        self.http = http
        self.api = api
        self.max_response_bytes = max_response_bytes
        self.settings = settings or self.default_settings()
        self.auth = auth
        self.sleep, self.clock, self.jitter = sleep, clock, jitter
        self.stats = ClientStats()
        self.pacer = self.pacing(rate or RateHeaders())

    def default_settings(self) -> RetrySettings:
        return RetrySettings()

    def pacing(self, rate: RateHeaders) -> Pacing:
        """How this client paces itself (one budget for the API, from ``rate``'s headers)."""
        return HeaderBudget(rate, margin=self.settings.reset_margin_seconds, clock=self.clock)

    def label(self, endpoint: str) -> str:
        return f"{self.api} {endpoint}" if self.api else endpoint

    def get(self, endpoint: str, path: str, params: Any = None) -> Page:
        return self.request("GET", endpoint, path, params=params)

    def post(self, endpoint: str, path: str, body: Any) -> Page:
        return self.request("POST", endpoint, path, json=body)

    def request(self, method: str, endpoint: str, path: str, *, params: Any = None, json: Any = None,
                form: Mapping[str, str] | None = None) -> Page:
        """One call, paced and retried; raises a ``SourceError`` subclass when it cannot answer."""
        s, rules = self.settings, self.RULES
        failures = throttled = 0
        refreshed = False
        while True:
            self._pace(endpoint)
            self.stats.requests[endpoint] += 1
            self.pacer.sent(endpoint)
            headers = dict(self.auth(refreshed)) if self.auth else {}
            try:
                resp, body = get_capped(self.http, method, path, self.max_response_bytes, params=params, json=json,
                                        data=form, headers=headers)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                problem = type(exc).__name__
            except BodyTooLarge as exc:
                problem = str(exc)
            else:
                self.pacer.observe(endpoint, resp.headers)
                status = resp.status_code
                if status in rules.success:
                    if not rules.json_body:
                        return Page(endpoint, body, None)
                    parsed = _parse(body, rules.json_object_only)
                    if parsed is not _MALFORMED:
                        return Page(endpoint, body, parsed)
                    problem = "malformed JSON body"
                elif status in rules.throttled:
                    self.stats.throttled += 1
                    throttled += 1
                    wait = self.pacer.throttled_wait(endpoint, resp.headers, s.default_429_wait_seconds)
                    if wait > s.max_inline_wait_seconds or throttled > s.max_throttled:
                        raise RateLimitWait(f"{self.label(endpoint)}: {rules.throttled_text.format(wait=wait)}",
                                            seconds=wait, endpoint=endpoint)
                    if self.pacer.sleeps_after_throttle:
                        self._wait(wait)
                    continue
                elif status in rules.refresh_auth_on and self.auth is not None and not refreshed:
                    refreshed = True
                    continue
                elif status in rules.transient:
                    problem = f"HTTP {status}"
                else:
                    raise self.refusal(endpoint, resp, body)
            failures += 1
            if failures > s.max_retries:
                raise TransientError(f"{self.label(endpoint)}: {problem} after {failures} attempts", endpoint=endpoint)
            self.stats.retries += 1
            self.sleep(min(s.backoff_cap_seconds, s.backoff_seconds * 2 ** (failures - 1)) * (0.5 + self.jitter()))

    def refusal(self, endpoint: str, resp: httpx.Response, raw: bytes) -> SourceError:
        """The error a refusing answer stands for, as the rules word it."""
        rules, status = self.RULES, resp.status_code
        if status in rules.bad_request and rules.parameters is not None:
            reason, parameters = rules.parameters(raw)
            return BadRequest(f"{self.label(endpoint)}: {status} {reason}", endpoint=endpoint, status=status,
                              parameters=parameters)
        reason = rules.messages.get(status, "{reason}").format(reason=rules.reason(resp, raw))
        return PermanentError(f"{self.label(endpoint)}: HTTP {status} {reason}", endpoint=endpoint, status=status)

    def _pace(self, endpoint: str) -> None:
        wait = self.pacer.wait_before(endpoint)
        if wait > self.settings.max_inline_wait_seconds:
            raise RateLimitWait(f"{self.label(endpoint)}: request budget spent; window resets in {wait:.0f}s",
                                seconds=wait, endpoint=endpoint)
        if wait > 0:
            self._wait(wait)

    def _wait(self, seconds: float) -> None:
        self.stats.rate_limit_wait_seconds += seconds
        self.sleep(seconds)


def _parse(body: bytes, object_only: bool) -> Any:
    """The parsed body (None for an empty one, unless only an object will do), or ``_MALFORMED``."""
    if not body and not object_only:
        return None
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _MALFORMED
    return parsed if isinstance(parsed, dict) or not object_only else _MALFORMED


def new_http_client(base_url: str, *, headers: Mapping[str, str] | None = None, timeout_seconds: float = 30.0,
                    accept: str | None = "application/json") -> httpx.Client:
    """The pooled HTTP client of one credential (keep-alive, timeouts, fixed headers)."""
    fixed = {"User-Agent": "crawl_assets", **({"Accept": accept} if accept else {}), **(headers or {})}
    return httpx.Client(
        base_url=base_url.rstrip("/"),
        headers=fixed,
        timeout=httpx.Timeout(timeout_seconds, connect=min(10.0, timeout_seconds)),
        limits=httpx.Limits(max_connections=4, max_keepalive_connections=4),
    )
