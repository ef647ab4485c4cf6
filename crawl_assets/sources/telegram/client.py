"""The Telethon client the collector uses: paced, counted, flood- and network-aware, no updates.

Telethon's public way to send a request is calling the client (``await client(request)``, ``__call__``);
``iter_messages``, ``get_entity``, ``get_me`` and the takeout wrapper all go through it. ``CrawlClient``
wraps it once: it waits for the account's pacer, counts the request by type, sleeps short ``FLOOD_WAIT``s
in place (Telethon's own threshold is set to 0 so every flood wait comes to us and is accounted), turns
long ones into ``LongFloodWait``, and retries dropped connections with exponential backoff and jitter.
Media is the one exception: Telethon downloads file chunks below ``__call__``, so ``download`` paces and
counts each chunk through ``download_media``'s public ``progress_callback`` and gives the whole file the
same flood and network handling (a file interrupted by one is fetched again from its start; files are
small, bounded by the ``media_max_bytes`` option).
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from telethon import TelegramClient
from telethon.sessions import StringSession

from crawl_assets.sources.telegram.errors import FLOOD, NETWORK, LongFloodWait, ProxyFailed, SourceGone
from crawl_assets.sources.telegram.pacing import Clock, Pace, PaceNote, PaceSettings
from crawl_assets.sources.telegram.proxy import ProxySpec

DEVICE_MODEL = "crawl_assets"
APP_VERSION = "crawl_assets telegram collector"
SYSTEM_VERSION = "crawl_assets"
FILE_CHUNK_REQUEST = "GetFileRequest"  # what each chunk of ``download_media`` sends (upload.getFile)

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class ClientSettings:
    """How gently one account is used (from TelegramResource; see docs/sources/telegram.md)."""

    request_interval: float = 1.0
    flood_sleep_threshold: int = 60
    max_flood_sleeps: int = 5
    network_retries: int = 3
    network_backoff: float = 2.0
    timeout: int = 20
    flood_backoff: float = 2.0
    max_interval: float = 60.0
    recovery_half_life: float = 3600.0
    requests_per_hour: int = 0

    def pace(self) -> PaceSettings:
        return PaceSettings(interval=self.request_interval, flood_backoff=self.flood_backoff,
                            max_interval=self.max_interval, recovery_half_life=self.recovery_half_life,
                            requests_per_hour=self.requests_per_hour, long_wait=self.flood_sleep_threshold)


def request_name(request: Any) -> str:
    """The type name of the innermost request (takeout and no-updates wrappers are unwrapped)."""
    while type(request).__name__.startswith("InvokeWith") and hasattr(request, "query"):
        request = request.query
    if isinstance(request, list):
        return "+".join(request_name(r) for r in request)
    return type(request).__name__


def proxy_arguments(proxy: ProxySpec | None, credential: str) -> dict[str, Any]:
    """``TelegramClient``'s ``connection``/``proxy`` for ``proxy``. Telethon silently connects *directly* when
    python-socks is missing, so a SOCKS/HTTP proxy without it is refused here instead."""
    if proxy is None:
        return {}
    if proxy.kind != "mtproxy":
        try:
            import python_socks  # noqa: F401
        except ImportError:
            raise SourceGone(f"the {proxy.shown} proxy of Telegram credential {credential!r} needs python-socks "
                             "(pip install 'python-socks[asyncio]'); refusing to connect without it") from None
    return proxy.telethon()


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
                 settings: ClientSettings = ClientSettings(), note: PaceNote | None = None,
                 proxy: ProxySpec | None = None, clock: Clock = Clock()):
        super().__init__(
            parse_session(session, credential), api_id, api_hash,
            receive_updates=False, flood_sleep_threshold=0, timeout=settings.timeout,
            device_model=DEVICE_MODEL, system_version=SYSTEM_VERSION, app_version=APP_VERSION,
            base_logger="crawl_assets.telegram.telethon", **proxy_arguments(proxy, credential),
        )
        self.credential = credential
        self.proxy = proxy
        self.settings = settings
        self.clock = clock
        self.pacer = Pace(settings.pace(), note if note is not None else PaceNote(), clock)
        self.request_counts: Counter[str] = Counter()
        self.flood_waited = 0.0
        self.network_retried = 0
        self.user_id: int | None = None  # the logged-in account, known after ``check_health``

    @property
    def requests_made(self) -> int:
        return sum(self.request_counts.values())

    async def __call__(self, request: Any, ordered: bool = False, flood_sleep_threshold: Any = None) -> Any:
        name = request_name(request)

        async def send() -> Any:
            await self.pacer.wait()
            self.request_counts[name] += 1
            return await super(CrawlClient, self).__call__(request, ordered=ordered, flood_sleep_threshold=0)

        return await self._patiently(name, send)

    async def download(self, message: Any) -> bytes | None:
        """The media of ``message`` as bytes (``download_media``), each chunk request paced and counted."""

        async def chunk_done(received: int, total: int | None) -> None:
            self.request_counts[FILE_CHUNK_REQUEST] += 1
            if total is None or received < total:  # another chunk follows: keep the account's spacing
                await self.pacer.wait()

        async def fetch() -> bytes | None:
            await self.pacer.wait()
            try:
                return await self.download_media(message, file=bytes, progress_callback=chunk_done)
            except FLOOD + NETWORK:
                self.request_counts[FILE_CHUNK_REQUEST] += 1  # the chunk request that was refused or lost
                raise

        return await self._patiently(FILE_CHUNK_REQUEST, fetch)

    async def _patiently(self, name: str, attempt: Callable[[], Awaitable[T]]) -> T:
        """``attempt()`` until it succeeds: short flood waits slept in place, dropped connections retried."""
        floods = network = 0
        while True:
            try:
                return await attempt()
            except FLOOD as exc:
                seconds = max(1, int(getattr(exc, "seconds", 1) or 1))
                floods += 1
                self.pacer.flooded(seconds)  # slower from now on, in this run and the account's next ones
                if seconds > self.settings.flood_sleep_threshold or floods > self.settings.max_flood_sleeps:
                    raise LongFloodWait(seconds, name) from exc
                log.info("flood wait of %ss on %s: sleeping in place, then one request per %.1fs", seconds, name,
                         self.pacer.interval())
                self.flood_waited += seconds
                await self.clock.sleep(seconds)
            except NETWORK as exc:
                if network >= self.settings.network_retries:
                    raise
                delay = self.settings.network_backoff * (2**network) * (0.5 + random.random())
                network += 1
                self.network_retried += 1
                log.warning("network error on %s (%s); retry %d in %.1fs", name, type(exc).__name__, network, delay)
                await self.clock.sleep(delay)
                if not self.is_connected():
                    await self.connect()

    async def _connect_patiently(self) -> None:
        """``connect()``, retried like a dropped connection; through a proxy, a last failure is ``ProxyFailed``
        (the account's sources pause with a reason naming the proxy by scheme, host and port only)."""
        attempt = 0
        while True:
            try:
                await self.connect()
                return
            except NETWORK as exc:
                if attempt >= self.settings.network_retries:
                    if self.proxy is None:
                        raise
                    what = self.proxy.scrub(str(exc))[:200] or "no answer"
                    raise ProxyFailed(
                        f"the {self.proxy.shown} proxy of Telegram credential {self.credential!r} failed after "
                        f"{attempt + 1} attempts ({type(exc).__name__}: {what}); fix the proxy or its "
                        "CRAWL_TELEGRAM_PROXY variable, then resume the source") from None
                delay = self.settings.network_backoff * (2**attempt) * (0.5 + random.random())
                attempt += 1
                self.network_retried += 1
                log.warning("cannot connect%s (%s); retry %d in %.1fs", f" through {self.proxy.shown}" if self.proxy
                            else "", type(exc).__name__, attempt, delay)
                await self.clock.sleep(delay)

    async def check_health(self) -> int:
        """Connect and make sure the session is still authorized (the logged-in user's id), else ``SourceGone``.

        ``connect()`` already asks for the logged-in user, which ``get_me(input_peer=True)`` then answers from
        Telethon's cache; only when that failed as unauthorized does ``is_user_authorized`` spend one more
        request to be sure.
        """
        self.pacer.check()  # an account resting from a long flood wait is not even connected
        await self._connect_patiently()
        me = await self.get_me(input_peer=True) if await self.is_user_authorized() else None
        if me is None:
            raise SourceGone(f"the Telegram session of credential {self.credential!r} is not authorized "
                             "(logged out, revoked or expired): run `crawl-assets telegram login` again")
        self.user_id = me.user_id
        return me.user_id
