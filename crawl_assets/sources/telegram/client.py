"""The Telethon client the collector uses: paced, counted, flood- and network-aware, no updates.

Every Telethon request goes through ``TelegramClient._call`` (``client/users.py``), including those of
``iter_messages``, ``get_entity``, ``download_media`` and takeout wrappers. ``CrawlClient`` hooks there
once: it waits for the account's pacer, counts the request by type, sleeps short ``FLOOD_WAIT``s in place
(Telethon's own threshold is set to 0 so every flood wait comes to us and is accounted), turns long ones
into ``LongFloodWait``, and retries dropped connections with exponential backoff and jitter.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from telethon import TelegramClient
from telethon.sessions import StringSession

from crawl_assets.sources.telegram.errors import FLOOD, NETWORK, LongFloodWait, SourceGone
from crawl_assets.sources.telegram.pacing import Pacer

DEVICE_MODEL = "crawl_assets"
APP_VERSION = "crawl_assets telegram collector"
SYSTEM_VERSION = "crawl_assets"

SenderFactory = Callable[[str], Any]


@dataclass(frozen=True)
class ClientSettings:
    """How gently one account is used (from TelegramResource; see docs/sources/telegram.md)."""

    request_interval: float = 1.0
    flood_sleep_threshold: int = 60
    max_flood_sleeps: int = 5
    network_retries: int = 3
    network_backoff: float = 2.0
    timeout: int = 20


def request_name(request: Any) -> str:
    """The type name of the innermost request (takeout and no-updates wrappers are unwrapped)."""
    while type(request).__name__.startswith("InvokeWith") and hasattr(request, "query"):
        request = request.query
    if isinstance(request, list):
        return "+".join(request_name(r) for r in request)
    return type(request).__name__


def parse_session(session: str, credential: str) -> StringSession:
    """A StringSession from its secret string; a bad string is reported without echoing it."""
    if not session:
        raise SourceGone(f"no Telegram session for credential {credential!r}: run `crawl-assets telegram login` "
                         "and store the printed string in its environment variable")
    try:
        return StringSession(session)
    except ValueError:
        raise SourceGone(f"the Telegram session string of credential {credential!r} is not valid "
                         "(truncated or not a Telethon StringSession)") from None


class CrawlClient(TelegramClient):
    """A ``TelegramClient`` for reading history: no update handling, every request paced and counted."""

    def __init__(self, *, credential: str, api_id: int, api_hash: str, session: str,
                 settings: ClientSettings = ClientSettings(), sender: Any = None, last_request: float = 0.0):
        super().__init__(
            parse_session(session, credential), api_id, api_hash,
            receive_updates=False, flood_sleep_threshold=0, timeout=settings.timeout,
            device_model=DEVICE_MODEL, system_version=SYSTEM_VERSION, app_version=APP_VERSION,
            base_logger="crawl_assets.telegram.telethon",
        )
        if sender is not None:
            self._sender = sender
        self.credential = credential
        self.settings = settings
        self.pacer = Pacer(settings.request_interval, last_request)
        self.request_counts: Counter[str] = Counter()
        self.flood_waited = 0.0
        self.network_retried = 0

    @property
    def requests_made(self) -> int:
        return sum(self.request_counts.values())

    async def _call(self, sender: Any, request: Any, ordered: bool = False, flood_sleep_threshold: Any = None) -> Any:
        name = request_name(request)
        floods = network = 0
        while True:
            await self.pacer.wait()
            self.request_counts[name] += 1
            try:
                return await super()._call(sender, request, ordered=ordered, flood_sleep_threshold=0)
            except FLOOD as exc:
                seconds = max(1, int(getattr(exc, "seconds", 1) or 1))
                floods += 1
                if seconds > self.settings.flood_sleep_threshold or floods > self.settings.max_flood_sleeps:
                    raise LongFloodWait(seconds, name) from exc
                self._log[__name__].info("flood wait of %ss on %s: sleeping in place", seconds, name)
                self.flood_waited += seconds
                await asyncio.sleep(seconds)
            except NETWORK as exc:
                if network >= self.settings.network_retries:
                    raise
                delay = self.settings.network_backoff * (2**network) * (0.5 + random.random())
                network += 1
                self.network_retried += 1
                self._log[__name__].warning("network error on %s (%s); retry %d in %.1fs",
                                            name, type(exc).__name__, network, delay)
                await asyncio.sleep(delay)
                if not self.is_connected():
                    await self.connect()

    async def check_health(self) -> int:
        """Connect and make sure the session is still authorized (the logged-in user's id), else ``SourceGone``.

        ``connect()`` already asks for the logged-in user; only when that failed as unauthorized does
        ``is_user_authorized`` spend one more request to be sure.
        """
        await self.connect()
        if not await self.is_user_authorized() or self._self_id is None:
            raise SourceGone(f"the Telegram session of credential {self.credential!r} is not authorized "
                             "(logged out, revoked or expired): run `crawl-assets telegram login` again")
        return self._self_id
