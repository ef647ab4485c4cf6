"""``StandinSender`` in place of Telethon's ``MTProtoSender``, and plugging it in (``use``/``release``)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from telethon import errors
from telethon.client import telegrambaseclient
from telethon.crypto import AuthKey
from telethon.extensions import BinaryReader
from telethon.sessions import StringSession
from telethon.tl import types

from crawl_assets_tests.standins.telegram_mtproto.accounts import Account
from crawl_assets_tests.standins.telegram_mtproto.world import ServerError, World

VECTOR = b"\x15\xc4\xb5\x1c"  # 0x1cb5c415, little endian


def _serialize(result: Any) -> bytes:
    if isinstance(result, bool):
        return (0x997275B5 if result else 0xBC799737).to_bytes(4, "little")  # boolTrue / boolFalse
    if isinstance(result, list):
        return VECTOR + len(result).to_bytes(4, "little") + b"".join(_serialize(x) for x in result)
    return bytes(result)


class StandinSender:
    """Takes the place of the ``MTProtoSender`` a ``TelegramClient`` builds (``use``): the same methods
    Telethon calls on it, no socket."""

    def __init__(self, world: World, account: Account):
        self.world = world
        self.account = account
        self.auth_key = account_key(account.name)
        self._user_connected = False
        self._disconnected: asyncio.Future[None] | None = None

    async def connect(self, connection: Any) -> bool:
        if self._user_connected:
            return False
        self.world.connects += 1
        self._user_connected = True
        self._disconnected = asyncio.get_running_loop().create_future()
        return True

    def is_connected(self) -> bool:
        return self._user_connected

    def _transport_connected(self) -> bool:
        return self._user_connected

    async def disconnect(self) -> None:
        self._user_connected = False
        if self._disconnected is not None and not self._disconnected.done():
            self._disconnected.set_result(None)

    @property
    def disconnected(self) -> asyncio.Future[None]:
        if self._disconnected is None:
            self._disconnected = asyncio.get_running_loop().create_future()
        return asyncio.shield(self._disconnected)

    def _keepalive_ping(self, rnd_id: int) -> None:
        pass

    def send(self, request: Any, ordered: bool = False) -> Any:
        if not self._user_connected:
            raise ConnectionError("Cannot send requests while disconnected")
        if isinstance(request, list):
            return [self._one(r) for r in request]
        return self._one(request)

    def _one(self, request: Any) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        wire = bytes(request)  # what RequestState would put on the wire
        started = time.perf_counter()
        try:
            result = self.world.handle(self.account, BinaryReader(wire).tgread_object())
            payload = _serialize(result)
        except ServerError as exc:
            self.world.server_seconds += time.perf_counter() - started
            future.set_exception(errors.rpc_message_to_error(types.RpcError(exc.code, exc.message), request))
            return future
        except ConnectionError as exc:
            self.world.server_seconds += time.perf_counter() - started
            future.set_exception(exc)
            return future
        self.world.server_seconds += time.perf_counter() - started
        future.set_result(request.read_result(BinaryReader(payload)))
        return future


# -- plugging in: tests (and the bench) put the stand-in where Telethon builds its MTProtoSender ------------

ACTIVE: World | None = None
_TELETHON_SENDER = telegrambaseclient.MTProtoSender
_KEY_MARK = b"standin-account:"


def account_key(name: str) -> AuthKey:
    """The auth key of the stand-in account ``name``: as on Telegram, the key a client presents says who it is."""
    return AuthKey((_KEY_MARK + name.encode()).ljust(256, b"\0"))


def session_for(name: str = "default") -> str:
    """A StringSession string (dc 2) logged in as the stand-in account ``name``."""
    s = StringSession()
    s.set_dc(2, "149.154.167.51", 443)
    s.auth_key = account_key(name)
    return s.save()


def sender_for(auth_key: AuthKey | None, **_telethon_kwargs: Any) -> StandinSender:
    """What ``TelegramClient.__init__`` gets when it builds its ``MTProtoSender`` while a world is in use:
    the stand-in sender of the account the session's auth key belongs to (``session_for``). A client without
    a key (a fresh login) talks as ``World.login_account``; a key the stand-in never issued, as ``default``."""
    if ACTIVE is None:
        raise RuntimeError("no stand-in world is active: call telegram_mtproto.use(world) first")
    data = auth_key.key if auth_key is not None else b""
    if not data:
        return StandinSender(ACTIVE, ACTIVE.account(ACTIVE.login_account))
    name = data[len(_KEY_MARK):].rstrip(b"\0").decode() if data.startswith(_KEY_MARK) else "default"
    return StandinSender(ACTIVE, ACTIVE.account(name))


def use(world: World) -> None:
    """Make ``world`` the Telegram every client built from now on talks to, until ``release()``: Telethon's
    ``telegrambaseclient`` module builds ``sender_for(...)`` instead of its ``MTProtoSender``. The client
    itself, its requests, their serialization and the entity cache stay Telethon's own."""
    global ACTIVE
    ACTIVE = world
    telegrambaseclient.MTProtoSender = sender_for


def release() -> None:
    """Telethon builds its own ``MTProtoSender`` again."""
    global ACTIVE
    ACTIVE = None
    telegrambaseclient.MTProtoSender = _TELETHON_SENDER
