"""``StandinSender`` in place of Telethon's ``MTProtoSender``, and plugging it in (``use``/``release``)."""

from __future__ import annotations

import asyncio
import struct
import time
from typing import Any

from telethon import errors
from telethon.client import telegrambaseclient
from telethon.extensions import BinaryReader
from telethon.sessions import StringSession
from telethon.tl import types
from telethon.tl.core import RpcResult

from crawl_assets_tests.standins.telegram_mtproto.accounts import _KEY_MARK, Account, account_key
from crawl_assets_tests.standins.telegram_mtproto.world import ServerError, World

VECTOR = b"\x15\xc4\xb5\x1c"  # 0x1cb5c415, little endian


def _serialize(result: Any) -> bytes:
    if isinstance(result, bool):
        return (0x997275B5 if result else 0xBC799737).to_bytes(4, "little")  # boolTrue / boolFalse
    if isinstance(result, list):
        return VECTOR + len(result).to_bytes(4, "little") + b"".join(_serialize(x) for x in result)
    return bytes(result)


RPC_RESULT = 0xF35C6D01  # rpc_result#f35c6d01 req_msg_id:long result:Object


def answer(world: World, dc_id: int, key_id: int, msg_id: int, body: bytes) -> bytes:
    """Data centre ``dc_id``'s reply to one message: ``rpc_result`` with the result or an ``rpc_error``. The
    account is the one whose auth key id the message carries; a NETWORK fault raises ``ConnectionError``."""
    account = world.account_for_key(key_id)
    started = time.perf_counter()
    try:
        payload = _serialize(world.handle(account, BinaryReader(body).tgread_object(), dc_id))
    except ServerError as exc:
        payload = bytes(types.RpcError(exc.code, exc.message))
    finally:
        world.server_seconds += time.perf_counter() - started
    return struct.pack("<Iq", RPC_RESULT, msg_id) + payload


class StandinSender:
    """Takes the place of the ``MTProtoSender`` a ``TelegramClient`` builds (``use``): the same methods
    Telethon calls on it. Without a ``Network`` on the world no socket is opened; with one, the connection
    Telethon hands to ``connect`` (its transport, its proxy) carries every request (``network.py``)."""

    def __init__(self, world: World, account: Account):
        self.world = world
        self.account = account
        self.auth_key = account_key(account.name)
        self._user_connected = False
        self._disconnected: asyncio.Future[None] | None = None
        self._connection: Any = None  # Telethon's Connection, on a network
        self._pending: dict[int, tuple[Any, asyncio.Future[Any]]] = {}
        self._receiving: asyncio.Task[None] | None = None
        self._msg_id = 0
        self.dc_id = 2

    async def connect(self, connection: Any) -> bool:
        if self._user_connected:
            return False
        self.dc_id = connection._dc_id
        if self.world.network is not None:
            self.world.network.route(connection)
            await connection.connect(timeout=10)  # through the client's proxy, if it has one
            self._connection = connection
            self._receiving = asyncio.get_running_loop().create_task(self._receive())
        self.world.connects += 1
        self.world.connections.append(type(connection).__name__)
        self._user_connected = True
        self._disconnected = asyncio.get_running_loop().create_future()
        return True

    def is_connected(self) -> bool:
        return self._user_connected

    def _transport_connected(self) -> bool:
        return self._user_connected

    async def disconnect(self) -> None:
        self._lost(ConnectionError("disconnected"))
        if self._receiving is not None:
            self._receiving.cancel()
            self._receiving = None
        if self._connection is not None:
            connection, self._connection = self._connection, None
            await connection.disconnect()

    def _lost(self, exc: BaseException) -> None:
        self._user_connected = False
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(exc)
        self._pending.clear()
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
        self._msg_id += 4
        wire = bytes(request)  # what RequestState would put on the wire
        if self._connection is not None:
            self._pending[self._msg_id] = (request, future)
            header = struct.pack("<QqI", self.auth_key.key_id, self._msg_id, len(wire))
            asyncio.get_running_loop().create_task(self._connection.send(header + wire))
            return future
        try:
            reply = answer(self.world, self.dc_id, self.auth_key.key_id, self._msg_id, wire)
        except ConnectionError as exc:
            future.set_exception(exc)
            return future
        self._settle(request, future, reply)
        return future

    async def _receive(self) -> None:
        try:
            while True:
                message = await self._connection.recv()
                length = struct.unpack("<I", message[16:20])[0]
                reply = message[20:20 + length]
                msg_id = struct.unpack("<q", reply[4:12])[0]
                request, future = self._pending.pop(msg_id, (None, None))
                if future is not None and not future.done():
                    self._settle(request, future, reply)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the data centre or the proxy dropped the connection
            self._lost(exc if isinstance(exc, ConnectionError) else ConnectionError(f"stand-in: {exc!r}"))

    def _settle(self, request: Any, future: asyncio.Future[Any], reply: bytes) -> None:
        reader = BinaryReader(reply)
        reader.read_int(signed=False)  # rpc_result's constructor
        result = RpcResult.from_reader(reader)
        if result.error is not None:
            future.set_exception(errors.rpc_message_to_error(result.error, request))
            return
        value = request.read_result(BinaryReader(result.body))
        if isinstance(value, types.auth.Authorization):  # SignIn, CheckPassword, ImportAuthorization
            self.account = self.world.account_by_user(value.user.id)
            self.auth_key = account_key(self.account.name)
        future.set_result(value)


# -- plugging in: tests (and the bench) put the stand-in where Telethon builds its MTProtoSender ------------

ACTIVE: World | None = None
_TELETHON_SENDER = telegrambaseclient.MTProtoSender
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
