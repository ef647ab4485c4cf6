"""Telegram's flood control, simulated (``World.flood``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from crawl_assets_tests.standins.telegram_mtproto.errors import ServerError


@dataclass
class FloodControl:
    """Telegram's flood control as a client sees it: per account, at most ``limit`` calls of the limited
    methods per ``window`` seconds. A call over that gets ``FLOOD_WAIT_X``: X is the time until the window
    frees, doubled for each violation since the account was last quiet for ``memory`` seconds (waits escalate
    when a client keeps pushing); a call during a wait gets what remains of it. Time is ``now()`` (a
    ``SimClock``'s in simulations). The real limits are not published; these are a model, and ``waits`` keeps
    every wait given (time, account, seconds) to check a client against it."""

    now: Any
    limit: int = 30
    window: float = 60.0
    memory: float = 900.0
    max_wait: int = 86_400
    methods: tuple[str, ...] = ("GetHistoryRequest", "GetRepliesRequest", "GetDiscussionMessageRequest",
                                "GetFullChannelRequest", "ResolveUsernameRequest")
    waits: list[tuple[float, str, int]] = field(default_factory=list)
    calls: dict[str, list[float]] = field(default_factory=dict)
    _strikes: dict[str, tuple[int, float, float]] = field(default_factory=dict)  # strikes, last, blocked until

    def check(self, account: str, method: str) -> None:
        if method not in self.methods:
            return
        now = self.now()
        strikes, last, blocked = self._strikes.get(account, (0, -math.inf, -math.inf))
        if now < blocked:
            raise ServerError(420, f"FLOOD_WAIT_{math.ceil(blocked - now)}")
        recent = [t for t in self.calls.get(account, []) if t > now - self.window]
        if len(recent) >= self.limit:
            strikes = strikes + 1 if now - last < self.memory else 1
            wait = min(self.max_wait, max(1, math.ceil(recent[0] + self.window - now)) * 2 ** (strikes - 1))
            self._strikes[account] = (strikes, now, now + wait)
            self.waits.append((now, account, wait))
            self.calls[account] = recent
            raise ServerError(420, f"FLOOD_WAIT_{wait}")
        recent.append(now)
        self.calls[account] = recent

    def rate(self, account: str, seconds: float) -> int:
        """The calls ``account`` got through in the last ``seconds`` (a window is never over ``limit``)."""
        now = self.now()
        return sum(1 for t in self.calls.get(account, []) if t > now - seconds)
