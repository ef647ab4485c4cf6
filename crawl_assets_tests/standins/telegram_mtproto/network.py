"""The stand-in on real sockets: data centres that speak Telegram's TCP transports, and the proxies in front.

With a ``Network`` attached to a ``World``, every ``StandinSender`` opens the connection Telethon hands it
(``ConnectionTcpFull``, an MTProxy connection...: Telethon's own classes, through the proxy it was given)
and sends each request over it, framed by Telethon's transport codec. A ``DataCenter`` reads the transport
(abridged, intermediate, padded intermediate or full, told apart by their first bytes as Telegram does)
and answers each message with MTProto's ``rpc_result``. What the stand-in leaves out is MTProto's
encryption: a message is laid out like an unencrypted one (auth key id, message id, length, body), but
carries the auth key id of the account that sends it, which is how the data centre knows who talks.

``DataCenter.only_from`` makes a data centre refuse every connection that does not come from the proxies'
egress address (``EGRESS``, a second loopback address): the proof that no connection went around the proxy.
SOCKS5 and HTTP CONNECT proxies are ``pproxy`` servers (a kept proxy library, with user/password checks);
the MTProxy is ``MTProxy`` below: the obfuscated handshake with the proxy's secret, then a relay to the data
centre named in the handshake.

Everything runs on one event loop in a background thread, so it outlives the ``asyncio.run`` of each sync.
"""

from __future__ import annotations

import asyncio
import hashlib
import struct
import threading
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from telethon.crypto import AESModeCTR

T = TypeVar("T")
HOST = "127.0.0.1"
EGRESS = "127.0.0.2"  # the address the proxies connect onwards from (all of 127/8 is loopback on Linux)
ABRIDGED, INTERMEDIATE, PADDED = b"\xef", b"\xee" * 4, b"\xdd" * 4
Answer = Callable[[int, int, int, bytes], bytes]  # (dc id, auth key id, msg id, body) -> the rpc_result


class Frames:
    """One side of a Telegram TCP transport on a stream: ``read()`` one packet, ``write()`` one packet."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, mode: str, pending: bytes = b""):
        self.reader, self.writer, self.mode, self.pending = reader, writer, mode, pending
        self.sent = 0

    @classmethod
    async def accept(cls, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> "Frames":
        first = await reader.readexactly(1)
        if first == ABRIDGED:
            return cls(reader, writer, "abridged")
        head = first + await reader.readexactly(3)
        if head == INTERMEDIATE:
            return cls(reader, writer, "intermediate")
        if head == PADDED:
            return cls(reader, writer, "padded")
        return cls(reader, writer, "full", head)  # no tag: the first 4 bytes are the first packet's length

    async def read(self) -> bytes:
        r = self.reader
        if self.mode == "abridged":
            n = (await r.readexactly(1))[0]
            if n >= 0x7F:
                n = int.from_bytes(await r.readexactly(3), "little")
            return await r.readexactly(n * 4)
        if self.mode == "full":
            head, self.pending = (self.pending or await r.readexactly(4)), b""
            length = int.from_bytes(head, "little")
            rest = await r.readexactly(length - 4)
            body, crc = rest[:-4], int.from_bytes(rest[-4:], "little")
            if zlib.crc32(head + body) != crc:
                raise ConnectionError("stand-in: bad transport checksum")
            return body[4:]  # after the sequence number
        data = await r.readexactly(int.from_bytes(await r.readexactly(4), "little"))
        return data[: len(data) - len(data) % 4] if self.mode == "padded" else data

    def write(self, data: bytes) -> None:
        if self.mode == "abridged":
            n = len(data) // 4
            head = bytes([n]) if n < 0x7F else b"\x7f" + n.to_bytes(3, "little")
            self.writer.write(head + data)
        elif self.mode == "full":
            packet = struct.pack("<ii", len(data) + 12, self.sent) + data
            self.writer.write(packet + struct.pack("<I", zlib.crc32(packet)))
        else:
            self.writer.write(struct.pack("<i", len(data)) + data)
        self.sent += 1


@dataclass
class DataCenter:
    """One Telegram data centre: a listening socket answering MTProto messages through ``answer``."""

    dc_id: int
    answer: Answer
    only_from: set[str] | None = None  # peer addresses allowed to connect (None: anyone)
    port: int = 0
    accepted: Counter[str] = field(default_factory=Counter)  # connections served, by peer address
    refused: Counter[str] = field(default_factory=Counter)  # connections refused by ``only_from``, by peer address
    server: asyncio.base_events.Server | None = None

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, HOST, 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")[0]
        if self.only_from is not None and peer not in self.only_from:
            self.refused[peer] += 1
            writer.close()
            return
        self.accepted[peer] += 1
        try:
            frames = await Frames.accept(reader, writer)
            while True:
                message = await frames.read()
                key_id, msg_id, length = struct.unpack("<QqI", message[:20])
                reply = self.answer(self.dc_id, key_id, msg_id, message[20:20 + length])
                frames.write(struct.pack("<QqI", key_id, msg_id + 1, len(reply)) + reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass  # the client went away, or the world dropped the connection (a NETWORK fault)
        finally:
            writer.close()


@dataclass
class MTProxy:
    """An MTProxy (https://core.telegram.org/mtproto/mtproto-transports#transport-obfuscation with a secret):
    checks the obfuscated handshake against ``secret``, then relays to the data centre it names."""

    secret: bytes  # 16 bytes
    data_centres: dict[int, DataCenter]
    port: int = 0
    served: int = 0
    refused: int = 0  # handshakes that did not decrypt with the secret
    dc_ids: list[int] = field(default_factory=list)
    server: asyncio.base_events.Server | None = None

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, HOST, 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            header = await reader.readexactly(64)
        except asyncio.IncompleteReadError:
            writer.close()
            return
        backwards = header[55:7:-1]
        decrypt = AESModeCTR(hashlib.sha256(header[8:40] + self.secret).digest(), header[40:56])
        encrypt = AESModeCTR(hashlib.sha256(backwards[:32] + self.secret).digest(), backwards[32:48])
        plain = decrypt.encrypt(header)
        tag, dc_id = plain[56:60], int.from_bytes(plain[60:62], "little", signed=True)
        dc = self.data_centres.get(abs(dc_id))
        if tag not in (ABRIDGED * 4, INTERMEDIATE, PADDED) or dc is None:
            self.refused += 1  # a wrong secret decrypts to noise: close, as MTProxy does
            writer.close()
            return
        self.served += 1
        self.dc_ids.append(abs(dc_id))
        up_reader, up_writer = await asyncio.open_connection(HOST, dc.port, local_addr=(EGRESS, 0))
        up_writer.write(ABRIDGED if tag == ABRIDGED * 4 else tag)

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, cipher: AESModeCTR) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(cipher.encrypt(data))
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pump(reader, up_writer, decrypt), pump(up_reader, writer, encrypt))


@dataclass
class Proxy:
    """A SOCKS5 or HTTP CONNECT proxy (``pproxy``) with a user and password; counts the tunnels it opened."""

    kind: str
    user: str
    password: str
    port: int = 0
    tunnels: list[str] = field(default_factory=list)  # "host:port" of each tunnel opened
    refusals: int = 0
    server: Any = None

    async def start(self) -> None:
        import pproxy

        # authtime=0: every connection proves the password (pproxy otherwise trusts an address for 30 days)
        self.server = await pproxy.Server(f"{self.kind}://{HOST}:0/@{EGRESS}#{self.user}:{self.password}").start_server(
            {"rserver": [], "verbose": self._note, "authtime": 0})
        self.port = self.server.sockets[0].getsockname()[1]

    def _note(self, line: str) -> None:
        if " -> " in line:
            self.tunnels.append(line.rsplit(" -> ", 1)[1])
        elif line.startswith("Unauthorized"):
            self.refusals += 1

    @property
    def url(self) -> str:
        return f"{'socks5' if self.kind == 'socks5' else 'http'}://{self.user}:{self.password}@{HOST}:{self.port}"


class Network:
    """Data centres 2 and 4 (media lives on 4) and the proxies a test starts, on a background event loop."""

    def __init__(self, answer: Answer, *, proxied_only: bool = False):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="telegram-standin-network", daemon=True)
        self.thread.start()
        only = {EGRESS} if proxied_only else None
        self.dcs = {i: DataCenter(i, answer, only) for i in (2, 4)}
        self.servers: list[Any] = list(self.dcs.values())
        for dc in self.dcs.values():
            self.run(dc.start())

    def run(self, coro: Awaitable[T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)  # type: ignore[arg-type]

    def address(self, dc_id: int = 2) -> tuple[str, int]:
        return HOST, self.dcs[dc_id].port

    def route(self, connection: Any) -> None:
        """Point a Telethon connection aimed at Telegram's own addresses (a session's data centre, Telethon's
        built-in one for a fresh login) at the stand-in data centre of that id: this network is the only
        Telegram there is, and nothing leaves the machine. Connections to a loopback address (an MTProxy's,
        the data centres' own) are left as they are."""
        if not str(connection._ip).startswith("127."):
            connection._ip, connection._port = self.address(connection._dc_id if connection._dc_id in self.dcs else 2)

    def proxy(self, kind: str, user: str = "crawler", password: str = "pr0xy-s3cret!") -> Proxy:
        proxy = Proxy(kind, user, password)
        self.run(proxy.start())
        self.servers.append(proxy)
        return proxy

    def mtproxy(self, secret: bytes) -> MTProxy:
        proxy = MTProxy(secret, self.dcs)
        self.run(proxy.start())
        self.servers.append(proxy)
        return proxy

    def connections(self) -> tuple[int, int]:
        """(connections served, connections refused) over every data centre."""
        return (sum(sum(dc.accepted.values()) for dc in self.dcs.values()),
                sum(sum(dc.refused.values()) for dc in self.dcs.values()))

    def close(self) -> None:
        async def stop() -> None:
            for s in self.servers:
                if s.server is not None:
                    s.server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self.run(stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


def forget_telethon_config() -> None:
    """Drop the ``help.getConfig`` answer Telethon caches on the client *class* (the data centres' addresses
    of an earlier network), so each network's addresses are asked for again."""
    from telethon import TelegramClient

    stack = [TelegramClient]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if "_config" in vars(cls):
            cls._config = None
