"""Pacing from X's rate-limit headers, so a sync waits *before* a 429 instead of after one.

X sends ``x-rate-limit-limit``/``-remaining``/``-reset`` (epoch seconds) per endpoint and token. When the
budget of an endpoint is spent we wait for its reset; full-archive search is also held to a minimum
interval (one request per second, X's documented limit there). The daily caps
(``x-app-limit-24hour-*``, ``x-user-limit-24hour-*``) count too when a 429 names them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

DAILY_PREFIXES = ("x-app-limit-24hour", "x-user-limit-24hour")


@dataclass
class Window:
    remaining: int
    reset: float  # epoch seconds


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class Pacer:
    """Per-endpoint budget seen in the last response, and the time of the last request."""

    def __init__(self, *, min_interval: Mapping[str, float] | None = None, margin: float = 1.0,
                 clock: Callable[[], float] = time.time):
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
        remaining = _int(headers.get("x-rate-limit-remaining"))
        reset = _int(headers.get("x-rate-limit-reset"))
        if remaining is not None and reset is not None:
            self.windows[endpoint] = Window(remaining, float(reset))

    def throttled_wait(self, endpoint: str, headers: Mapping[str, str], default: float) -> float:
        """After a 429: seconds until the exhausted window (per-endpoint or daily) resets."""
        now = self.clock()
        resets = []
        for prefix in ("x-rate-limit", *DAILY_PREFIXES):
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
