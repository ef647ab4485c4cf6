"""Simulated time for the account's pacing and the stand-in's flood control: sleeping advances it at once."""

from __future__ import annotations

import asyncio

from crawl_assets.sources.telegram.pacing import Clock


class SimClock:
    """A clock whose ``sleep`` moves time forward instead of waiting (``clock()``: the ``Clock`` to give a
    ``TelegramResource``); ``slept`` adds up every wait."""

    def __init__(self, start: float = 1_767_225_600.0):
        self.t = start
        self.slept = 0.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.t += seconds
            self.slept += seconds
        await asyncio.sleep(0)

    def advance(self, seconds: float) -> None:
        self.t += seconds

    def clock(self) -> Clock:
        return Clock(now=self.now, sleep=self.sleep)
