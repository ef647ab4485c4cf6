"""Pacing strategies: waiting *before* a request the API would throttle, and how long a 429 asks to wait.

- :class:`HeaderBudget`: one budget for the whole API, from its ``remaining``/``reset`` headers (names and
  reset encoding are data: :class:`RateHeaders`); after a 429 the client sleeps what ``Retry-After`` or the
  reset says.
- :class:`EndpointWindows`: a window per endpoint (``<prefix>-remaining``/``-reset``, epoch seconds), minimum
  intervals per endpoint, and extra windows a 429 may name (X's daily caps); after a 429 the exhausted window
  holds the next request.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


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
