"""Telegram at the MTProto request level: a stand-in for Telethon's ``MTProtoSender``.

Telethon sends every request through its client's ``MTProtoSender``: ``sender.send(request)``
returns a future resolved with the parsed result (``network/mtprotosender.py``: ``RequestState``
serializes the request, the receive loop parses ``state.request.read_result(reader)`` or turns an
``rpc_error`` into ``errors.rpc_message_to_error(rpc_error, state.request)``). ``StandinSender``
keeps that contract without a socket: it serializes the request with ``bytes(request)``, the
simulated server parses it back with ``BinaryReader.tgread_object()`` (so it sees exactly what would
go on the wire), answers with real TL objects, which are serialized and parsed again by the
request's own ``read_result``. Errors are built by Telethon's own ``rpc_message_to_error``. So
``connect()`` (``InvokeWithLayer(InitConnection(GetConfig))``, ``get_me``, ``GetState``,
``GetDifference``), ``iter_messages`` paging, the entity cache and flood-wait handling all run
unmodified.

The simulated channel is generated lazily from message ids (a million messages cost no memory);
edits, deletions and counter bumps are small overrides. A channel can have a linked discussion group
whose comment threads answer ``GetDiscussionMessage`` and ``GetReplies``.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import re
import secrets
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from telethon import errors
from telethon import password as pwd
from telethon.client import telegrambaseclient
from telethon.crypto import AuthKey
from telethon.extensions import BinaryReader
from telethon.sessions import StringSession
from telethon.tl import TLObject, functions, types

VECTOR = b"\x15\xc4\xb5\x1c"  # 0x1cb5c415, little endian
BASE = datetime(2020, 1, 1, tzinfo=timezone.utc)
ORIGIN_CHANNEL_ID = 1_500_000_001  # the channel forwarded posts come from


class ServerError(Exception):
    """An RPC error the simulated server answers with (turned into Telethon's own exception class)."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code, self.message = code, message


# -- text with entities (offsets in UTF-16 code units) -------------------------------------------

_TOKEN = re.compile(r"(#\w+)|(@\w+)|(https?://\S+)")


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def entities_for(text: str) -> list[TLObject]:
    """Hashtag, mention and URL entities the way Telegram reports them: UTF-16 offsets and lengths."""
    out: list[TLObject] = []
    for match in _TOKEN.finditer(text):
        offset, length = utf16_len(text[: match.start()]), utf16_len(match.group(0))
        if match.group(1):
            out.append(types.MessageEntityHashtag(offset, length))
        elif match.group(2):
            out.append(types.MessageEntityMention(offset, length))
        else:
            out.append(types.MessageEntityUrl(offset, length))
    return out


TEMPLATES: list[str] = [
    "سلام دنیا #خبر_فوری از @news_fa https://example.com/fa/خبر",
    "Breaking 🚀 #Tech update by @writer see https://example.org/x?q=1",
    "👍🏽 گزارش ویژه #ایران 🇮🇷 https://t.me/s/example @Reporter_1",
    "Plain text message",
    "متن ساده فارسی با نیم‌فاصله و ۱۲۳ رقم",
    "Mixed English و فارسی 😀😀 #MixedTag #تگ @someone",
]
_TEMPLATE_ENTITIES = [entities_for(t) for t in TEMPLATES]


# -- the simulated chats ---------------------------------------------------------------------------


@dataclass
class SimChat:
    """A channel (``broadcast``) or supergroup; generated ids 1..top_id unless ``generated`` is False."""

    id: int
    access_hash: int
    title: str
    username: str | None = None
    about: str = ""
    broadcast: bool = True
    top_id: int = 0
    step_seconds: int = 600
    start: datetime = BASE
    generated: bool = True
    private: bool = False
    participants_count: int = 1234
    linked: "SimChat | None" = None
    deleted: set[int] = field(default_factory=set)
    edits: dict[int, int] = field(default_factory=dict)
    bumps: dict[int, int] = field(default_factory=dict)
    explicit: dict[int, TLObject] = field(default_factory=dict)
    # channel post id -> (discussion root id in the linked group, [comment ids])
    threads: dict[int, tuple[int, list[int]]] = field(default_factory=dict)
    media_bytes: int = 2048

    # ids ------------------------------------------------------------------------------------
    def exists(self, msg_id: int) -> bool:
        if self.generated:
            return 1 <= msg_id <= self.top_id and msg_id not in self.deleted
        return msg_id in self.explicit and msg_id not in self.deleted

    def ids_below(self, below: int | None, n: int, lo: int = 0) -> list[int]:
        """Up to ``n`` largest existing ids < ``below`` (None: no bound) and > ``lo``, descending."""
        out: list[int] = []
        if not self.generated:
            for i in sorted(self.explicit, reverse=True):
                if len(out) >= n:
                    break
                if (below is None or i < below) and i > lo and i not in self.deleted:
                    out.append(i)
            return out
        i = self.top_id if below is None else min(below - 1, self.top_id)
        while i > lo and len(out) < n:
            if i not in self.deleted:
                out.append(i)
            i -= 1
        return out

    def ids_from(self, start: int, n: int) -> list[int]:
        """Up to ``n`` smallest existing ids >= ``start``, ascending."""
        if not self.generated:
            return [i for i in sorted(self.explicit) if i >= start and i not in self.deleted][:n]
        out, i = [], max(start, 1)
        while i <= self.top_id and len(out) < n:
            if i not in self.deleted:
                out.append(i)
            i += 1
        return out

    def count(self) -> int:
        if self.generated:
            return self.top_id - sum(1 for d in self.deleted if d <= self.top_id)
        return len([i for i in self.explicit if i not in self.deleted])

    # changes --------------------------------------------------------------------------------
    def post(self, n: int = 1) -> list[int]:
        """New messages at the top (dates continue the sequence)."""
        first = self.top_id + 1
        self.top_id += n
        return list(range(first, self.top_id + 1))

    def edit(self, msg_id: int) -> None:
        self.edits[msg_id] = self.edits.get(msg_id, 0) + 1

    def delete(self, *msg_ids: int) -> None:
        self.deleted.update(msg_ids)

    def bump(self, msg_id: int) -> None:
        """Counters (views, forwards, reactions) go up, as they do on a live post."""
        self.bumps[msg_id] = self.bumps.get(msg_id, 0) + 1

    def date_of(self, msg_id: int) -> datetime:
        return self.start + timedelta(seconds=msg_id * self.step_seconds)

    # TL objects -------------------------------------------------------------------------------
    def tl(self) -> types.Channel:
        return types.Channel(
            id=self.id, title=self.title, photo=types.ChatPhotoEmpty(), date=self.start,
            broadcast=self.broadcast or None, megagroup=(not self.broadcast) or None,
            access_hash=self.access_hash, username=self.username,
            participants_count=self.participants_count, has_link=bool(self.linked) or None,
        )

    def message(self, msg_id: int) -> TLObject:
        if msg_id in self.explicit:
            return self.explicit[msg_id]
        peer = types.PeerChannel(self.id)
        date = self.date_of(msg_id)
        if msg_id == 1:
            return types.MessageService(id=1, peer_id=peer, date=date, post=True,
                                        action=types.MessageActionChannelCreate(title=self.title))
        if msg_id % 97 == 0:
            return types.MessageService(id=msg_id, peer_id=peer, date=date, post=True,
                                        reply_to=types.MessageReplyHeader(reply_to_msg_id=msg_id - 1),
                                        action=types.MessageActionPinMessage())
        t = msg_id % len(TEMPLATES)
        text = f"{TEMPLATES[t]} ·{msg_id}"
        version = self.edits.get(msg_id, 0)
        entities = list(_TEMPLATE_ENTITIES[t])
        edit_date = None
        if version:
            text += f" (ویرایش {version})"
            edit_date = date + timedelta(minutes=5 * version)
        bump = self.bumps.get(msg_id, 0)
        fwd = reply = media = replies = None
        if msg_id % 10 == 0:
            fwd = types.MessageFwdHeader(date=date - timedelta(days=1), from_id=types.PeerChannel(ORIGIN_CHANNEL_ID),
                                         channel_post=msg_id // 10)
        elif msg_id % 7 == 0:
            reply = types.MessageReplyHeader(reply_to_msg_id=msg_id - 3)
        if msg_id % 13 == 0:
            media = types.MessageMediaPhoto(photo=types.Photo(
                id=10_000_000 + msg_id, access_hash=msg_id * 7919, file_reference=b"\x01\x02" + msg_id.to_bytes(4, "big"),
                date=date, sizes=[types.PhotoSize("m", 320, 240, 9000), types.PhotoSize("y", 1280, 960, self.media_bytes)],
                dc_id=2))
        if msg_id in self.threads and self.linked is not None:
            _, comments = self.threads[msg_id]
            live = [c for c in comments if self.linked.exists(c)]
            replies = types.MessageReplies(replies=len(live), replies_pts=len(comments), comments=True,
                                           channel_id=self.linked.id, max_id=max(live) if live else None)
        reactions = types.MessageReactions(results=[
            types.ReactionCount(reaction=types.ReactionEmoji("👍"), count=5 + msg_id % 9 + bump),
            types.ReactionCount(reaction=types.ReactionEmoji("❤"), count=2),
        ])
        if not self.broadcast:  # a supergroup: members write, no channel-post counters
            return types.Message(
                id=msg_id, peer_id=peer, date=date, message=text, from_id=types.PeerUser(COMMENTER.id),
                fwd_from=fwd, reply_to=reply, media=media, entities=entities, edit_date=edit_date, reactions=reactions)
        return types.Message(
            id=msg_id, peer_id=peer, date=date, message=text, post=True, fwd_from=fwd, reply_to=reply,
            media=media, entities=entities, views=1000 + msg_id % 500 + 10 * bump, forwards=msg_id % 17 + bump,
            replies=replies, edit_date=edit_date, reactions=reactions,
            post_author="Editor" if msg_id % 5 == 0 else None,
        )


# -- two-step verification: the server half of Telegram's SRP (https://core.telegram.org/api/srp) ------

SRP_G = 3
SRP_P = bytes.fromhex(  # the 2048-bit safe prime Telethon's password.check_prime_and_good knows as good
    "C71CAEB9C6B1C9048E6C522F70F13F73980D40238E3E21C14934D037563D930F"
    "48198A0AA7C14058229493D22530F4DBFA336F6E0AC925139543AED44CCE7C37"
    "20FD51F69458705AC68CD4FE6B6B13ABDC9746512969328454F18FAF8C595F64"
    "2477FE96BB2A941D5BCD1D4AC8CC49880708FA9B378E3C4F3A9060BEE67CF9A4"
    "A4A695811051907E162753B56B0F6B410DBA74D8A84B2A14B3144E0EF1284754"
    "FD17ED950D5965B4B9DD46582DB1178D169C6BC465B0D6FF9CA3928FEF5B9AE4"
    "E418FC15E83EBEA0F87FA9FF5EED70050DED2849F47BF959D956850CE929851F"
    "0D8115F635B105EE2E4E15D04B2454BF6F4FADF034B10403119CD8E3B92FCC5B")
_P = int.from_bytes(SRP_P, "big")
_K = int.from_bytes(pwd.sha256(SRP_P, pwd.big_num_for_hash(SRP_G)), "big")  # k = H(p | g)


@functools.lru_cache(maxsize=16)
def srp_verifier(salt1: bytes, salt2: bytes, password: str) -> int:
    """v = g^x mod p with x = PH2(password, salt1, salt2): what Telegram stores instead of the password."""
    algo = types.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(salt1, salt2, SRP_G, SRP_P)
    return pow(SRP_G, int.from_bytes(pwd.compute_hash(algo, password), "big"), _P)


def srp_challenge(v: int) -> tuple[int, bytes]:
    """A fresh secret b and the public B = (k*v + g^b) mod p (``srp_B``); b is redrawn until g^b passes
    the size check Telethon's ``compute_check`` applies to it."""
    while True:
        b = secrets.randbits(2048) % _P
        g_b = pow(SRP_G, b, _P)
        if pwd.is_good_mod_exp_first(g_b, _P):
            return b, pwd.big_num_for_hash((_K * v + g_b) % _P)


def srp_expected_m1(algo: TLObject, v: int, b: int, a_bytes: bytes) -> bytes | None:
    """The M1 a client knowing the password sends for this A (None for an A outside the range clients draw from).

    u = H(A | B), S = (A * v^u)^b mod p, K = H(S), M1 = H(H(p) xor H(g) | H(salt1) | H(salt2) | A | B | K).
    """
    a = int.from_bytes(a_bytes, "big")
    if len(a_bytes) != pwd.SIZE_FOR_HASH or not pwd.is_good_mod_exp_first(a, _P):
        return None
    a_for_hash = pwd.big_num_for_hash(a)
    b_for_hash = pwd.big_num_for_hash((_K * v + pow(SRP_G, b, _P)) % _P)
    u = int.from_bytes(pwd.sha256(a_for_hash, b_for_hash), "big")
    s = pow(a * pow(v, u, _P) % _P, b, _P)
    k_session = pwd.sha256(pwd.big_num_for_hash(s))
    p_for_hash, g_for_hash = pwd.num_bytes_for_hash(SRP_P), pwd.big_num_for_hash(SRP_G)
    return pwd.sha256(pwd.xor(pwd.sha256(p_for_hash), pwd.sha256(g_for_hash)), pwd.sha256(algo.salt1),
                      pwd.sha256(algo.salt2), a_for_hash, b_for_hash, k_session)


@dataclass
class Account:
    """An authorized user behind one credential name."""

    name: str
    user_id: int
    access_hash: int
    revoked: bool = False
    authorized: bool = True
    phone: str = "+989120000000"
    code: str = "12345"
    password: str | None = None  # two-step verification: SignIn then needs CheckPassword (SRP)
    awaiting_password: bool = False  # the code was right, the 2FA password is still owed
    srp_pending: dict[int, int] = field(default_factory=dict, repr=False)  # srp_id -> the server's secret b

    def srp_algo(self) -> types.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow:
        """The account's KDF parameters (salts fixed per account, as Telegram keeps them per password)."""
        salt = hashlib.sha256(f"standin-2fa:{self.name}".encode()).digest()
        return types.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(
            salt1=salt[:16], salt2=salt[16:], g=SRP_G, p=SRP_P)

    def tl(self) -> types.User:
        return types.User(id=self.user_id, is_self=True, access_hash=self.access_hash, first_name=f"crawler {self.name}")


@dataclass
class Fault:
    """Answer the next ``times`` matching requests (after skipping ``after``) with an error."""

    request: str
    message: str
    code: int = 420
    times: int = 1
    after: int = 0


_BEFORE_LOGIN = ("GetConfigRequest", "SendCodeRequest", "SignInRequest", "GetPasswordRequest", "CheckPasswordRequest")
COMMENTER = types.User(id=777_000_001, access_hash=42, first_name="کاربر", username="commenter")


class World:
    """The simulated Telegram: chats, accounts, injected faults and a per-type request count."""

    def __init__(self) -> None:
        self.chats: dict[int, SimChat] = {}
        self.accounts: dict[str, Account] = {}
        self.faults: list[Fault] = []
        self.counts: Counter[str] = Counter()
        self.by_account: dict[str, Counter[str]] = {}
        self.calls: list[str] = []
        self.server_seconds = 0.0
        self.connects = 0
        self.takeouts = 0
        self.login_account = "default"  # who a client without an auth key (a fresh login) talks as

    # setup ------------------------------------------------------------------------------------
    def account(self, name: str = "default") -> Account:
        if name not in self.accounts:
            n = len(self.accounts) + 1
            self.accounts[name] = Account(name, 900_000_000 + n, 555 * n)
        return self.accounts[name]

    def channel(self, username: str | None, *, messages: int, chat_id: int | None = None, step_seconds: int = 600,
                title: str = "کانال آزمایشی", about: str = "درباره این کانال 🌿", newest_at: datetime | None = None,
                private: bool = False, megagroup: bool = False) -> SimChat:
        """A broadcast channel (or a supergroup) whose newest message is dated ``newest_at`` (default: now)."""
        chat_id = chat_id or 1_000_000_000 + len(self.chats) + 1
        newest = newest_at or datetime.now(timezone.utc).replace(microsecond=0)
        chat = SimChat(id=chat_id, access_hash=chat_id * 31 + 7, title=title, username=username, about=about,
                       top_id=messages, step_seconds=step_seconds, private=private, broadcast=not megagroup,
                       start=newest - timedelta(seconds=messages * step_seconds))
        self.chats[chat_id] = chat
        return chat

    def discussion(self, channel: SimChat, *, every: int = 5, comments: int = 3, posts: int | None = None) -> SimChat:
        """Link a supergroup to ``channel``; every ``every``-th post (the newest ``posts``) gets a thread."""
        group = SimChat(id=channel.id + 500_000, access_hash=(channel.id + 500_000) * 31 + 7, title=f"{channel.title} chat",
                        broadcast=False, generated=False, start=channel.start)
        self.chats[group.id] = group
        channel.linked = group
        candidates = [p for p in range(channel.top_id, 0, -1) if p % every == 0 and p % 97 and p > 1]
        for post in sorted(candidates[:posts] if posts else candidates):
            self.add_thread(channel, post, comments)
        return group

    def add_thread(self, channel: SimChat, post: int, comments: int) -> None:
        group = channel.linked
        assert group is not None
        root = max(group.explicit, default=0) + 1
        date = channel.date_of(post)
        group.explicit[root] = types.Message(
            id=root, peer_id=types.PeerChannel(group.id), date=date, message=f"{TEMPLATES[3]} ·{post}",
            from_id=types.PeerChannel(channel.id), post=False,
            fwd_from=types.MessageFwdHeader(date=date, from_id=types.PeerChannel(channel.id), channel_post=post,
                                            saved_from_peer=types.PeerChannel(channel.id), saved_from_msg_id=post))
        channel.threads[post] = (root, [])
        for _ in range(comments):
            self.add_comment(channel, post)

    def add_comment(self, channel: SimChat, post: int) -> int:
        group = channel.linked
        assert group is not None
        root, ids = channel.threads[post]
        cid = max(group.explicit) + 1
        text = f"نظر {len(ids) + 1} دربارهٔ پست {post} #نظر @{channel.username or 'x'} 👍"
        group.explicit[cid] = types.Message(
            id=cid, peer_id=types.PeerChannel(group.id), date=channel.date_of(post) + timedelta(seconds=len(ids) + 1),
            message=text, entities=entities_for(text), from_id=types.PeerUser(COMMENTER.id),
            reply_to=types.MessageReplyHeader(reply_to_msg_id=root, reply_to_top_id=None))
        ids.append(cid)
        return cid

    def fail(self, request: str, message: str, *, code: int = 420, times: int = 1, after: int = 0) -> None:
        """Inject an RPC error (``FLOOD_WAIT_5``, ``CHANNEL_PRIVATE``...) or ``NETWORK`` for a dropped connection."""
        self.faults.append(Fault(request, message, code, times, after))

    def requests(self, *names: str) -> int:
        return sum(self.counts[n] for n in names) if names else sum(self.counts.values())

    # serving ------------------------------------------------------------------------------------
    def _fault(self, name: str) -> Fault | None:
        for fault in self.faults:
            if fault.request in (name, "*") and fault.times > 0:
                if fault.after > 0:
                    fault.after -= 1
                    return None
                fault.times -= 1
                return fault
        return None

    def handle(self, account: Account, request: TLObject) -> Any:
        while isinstance(request, (functions.InvokeWithLayerRequest, functions.InitConnectionRequest,
                                   functions.InvokeWithoutUpdatesRequest, functions.InvokeWithTakeoutRequest)):
            request = request.query
        name = type(request).__name__
        self.counts[name] += 1
        self.by_account.setdefault(account.name, Counter())[name] += 1
        self.calls.append(name)
        fault = self._fault(name)
        if fault is not None:
            if fault.message == "NETWORK":
                raise ConnectionError("stand-in: connection reset")
            raise ServerError(fault.code, fault.message)
        handler = getattr(self, f"_on_{name}", None)
        if handler is None:
            raise ServerError(400, f"STANDIN_UNSUPPORTED_{name.upper()}")
        if (account.revoked or not account.authorized) and name not in _BEFORE_LOGIN:
            raise ServerError(401, "AUTH_KEY_UNREGISTERED")
        return handler(account, request)

    def _chat(self, peer: Any) -> SimChat:
        chat_id = getattr(peer, "channel_id", None)
        chat = self.chats.get(chat_id) if chat_id is not None else None
        if chat is None or getattr(peer, "access_hash", None) != chat.access_hash:
            raise ServerError(400, "CHANNEL_INVALID")
        if chat.private:
            raise ServerError(406, "CHANNEL_PRIVATE")
        return chat

    # handlers -----------------------------------------------------------------------------------
    def _on_GetConfigRequest(self, account: Account, r: Any) -> TLObject:
        now = datetime.now(timezone.utc).replace(microsecond=0)
        return types.Config(
            date=now, expires=now + timedelta(hours=1), test_mode=False, this_dc=2, dc_options=[
                types.DcOption(id=2, ip_address="127.0.0.1", port=443)],
            dc_txt_domain_name="standin.invalid", chat_size_max=200, megagroup_size_max=200000, forwarded_count_max=100,
            online_update_period_ms=210000, offline_blur_timeout_ms=5000, offline_idle_timeout_ms=30000,
            online_cloud_timeout_ms=300000, notify_cloud_delay_ms=30000, notify_default_delay_ms=1500,
            push_chat_period_ms=60000, push_chat_limit=2, edit_time_limit=172800, revoke_time_limit=2147483647,
            revoke_pm_time_limit=2147483647, rating_e_decay=2419200, stickers_recent_limit=200,
            channels_read_media_period=604800, call_receive_timeout_ms=20000, call_ring_timeout_ms=90000,
            call_connect_timeout_ms=30000, call_packet_timeout_ms=10000, me_url_prefix="https://t.me/",
            caption_length_max=1024, message_length_max=4096, webfile_dc_id=4)

    def _on_GetUsersRequest(self, account: Account, r: Any) -> list[TLObject]:
        return [account.tl()]

    def _on_GetStateRequest(self, account: Account, r: Any) -> TLObject:
        return types.updates.State(pts=1, qts=0, date=datetime.now(timezone.utc).replace(microsecond=0), seq=1, unread_count=0)

    def _on_GetDifferenceRequest(self, account: Account, r: Any) -> TLObject:
        return types.updates.DifferenceEmpty(date=datetime.now(timezone.utc).replace(microsecond=0), seq=1)

    def _on_SendCodeRequest(self, account: Account, r: Any) -> TLObject:
        if r.phone_number.lstrip("+") != account.phone.lstrip("+"):
            raise ServerError(400, "PHONE_NUMBER_INVALID")
        return types.auth.SentCode(type=types.auth.SentCodeTypeApp(length=len(account.code)), phone_code_hash="standin")

    def _on_SignInRequest(self, account: Account, r: Any) -> TLObject:
        if r.phone_code != account.code or r.phone_code_hash != "standin":
            raise ServerError(400, "PHONE_CODE_INVALID")
        if account.password is not None:
            account.awaiting_password = True
            raise ServerError(401, "SESSION_PASSWORD_NEEDED")
        account.authorized = True
        return types.auth.Authorization(user=account.tl())

    def _on_GetPasswordRequest(self, account: Account, r: Any) -> TLObject:
        """The SRP challenge: KDF parameters, a fresh B and the srp_id that names this b."""
        algo = account.srp_algo()
        new_algo = types.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(
            salt1=algo.salt1, salt2=b"", g=SRP_G, p=SRP_P)  # the client appends its own salt when setting one
        common = dict(new_algo=new_algo, new_secure_algo=types.SecurePasswordKdfAlgoUnknown(),
                      secure_random=secrets.token_bytes(32))
        if account.password is None:
            return types.account.Password(**common)
        b, srp_b = srp_challenge(srp_verifier(algo.salt1, algo.salt2, account.password))
        srp_id = secrets.randbits(63)
        account.srp_pending[srp_id] = b
        return types.account.Password(**common, has_password=True, current_algo=algo, srp_B=srp_b, srp_id=srp_id)

    def _on_CheckPasswordRequest(self, account: Account, r: Any) -> TLObject:
        """Verify the client's M1 against the one the stored verifier gives; each srp_id serves one try."""
        check = r.password
        if account.password is None or not account.awaiting_password or not isinstance(check, types.InputCheckPasswordSRP):
            raise ServerError(400, "PASSWORD_HASH_INVALID")
        b = account.srp_pending.pop(check.srp_id, None)
        if b is None:
            raise ServerError(400, "SRP_ID_INVALID")
        algo = account.srp_algo()
        expected = srp_expected_m1(algo, srp_verifier(algo.salt1, algo.salt2, account.password), b, check.A)
        if expected is None or not secrets.compare_digest(expected, check.M1):
            raise ServerError(400, "PASSWORD_HASH_INVALID")
        account.awaiting_password, account.authorized = False, True
        return types.auth.Authorization(user=account.tl())

    def _on_ResolveUsernameRequest(self, account: Account, r: Any) -> TLObject:
        for chat in self.chats.values():
            if chat.username and chat.username.lower() == r.username.lower():
                if chat.private:
                    forbidden = types.ChannelForbidden(id=chat.id, access_hash=chat.access_hash, title=chat.title,
                                                       broadcast=True)
                    return types.contacts.ResolvedPeer(peer=types.PeerChannel(chat.id), chats=[forbidden], users=[])
                return types.contacts.ResolvedPeer(peer=types.PeerChannel(chat.id), chats=[chat.tl()], users=[])
        raise ServerError(400, "USERNAME_NOT_OCCUPIED")

    def _on_GetChannelsRequest(self, account: Account, r: Any) -> TLObject:
        return types.messages.Chats(chats=[self._chat(c).tl() for c in r.id])

    def _on_GetFullChannelRequest(self, account: Account, r: Any) -> TLObject:
        chat = self._chat(r.channel)
        full = types.ChannelFull(
            id=chat.id, about=chat.about, read_inbox_max_id=0, read_outbox_max_id=0, unread_count=0,
            chat_photo=types.PhotoEmpty(id=0), notify_settings=types.PeerNotifySettings(), bot_info=[], pts=1,
            participants_count=chat.participants_count, linked_chat_id=chat.linked.id if chat.linked else None)
        chats = [chat.tl()] + ([chat.linked.tl()] if chat.linked else [])
        return types.messages.ChatFull(full_chat=full, chats=chats, users=[])

    def _page(self, chat: SimChat, ids: list[int], extra_chats: list[SimChat] = ()) -> TLObject:
        messages = [chat.message(i) for i in ids]
        users = [COMMENTER] if not chat.broadcast else []
        return types.messages.ChannelMessages(pts=1, count=chat.count(), messages=messages, topics=[],
                                              chats=[chat.tl(), *(c.tl() for c in extra_chats)], users=users)

    @staticmethod
    def _window(chat: SimChat, offset_id: int, add_offset: int, limit: int, min_id: int, max_id: int,
                pool: list[int] | None = None) -> list[int]:
        """Telegram's history slice: ids below ``offset_id`` (descending), shifted by ``add_offset``."""
        limit = max(0, min(limit or 100, 100))
        if pool is not None:  # an explicit id list (a comment thread), descending
            below = [i for i in pool if not offset_id or i < offset_id]
            above = [i for i in pool if offset_id and i >= offset_id][::-1]
            if add_offset >= 0:
                ids = below[add_offset: add_offset + limit]
            else:
                ids = above[: -add_offset][::-1] + below[: max(0, limit + add_offset)]
                ids = ids[:limit]
        else:
            below_bound = offset_id or None
            if add_offset >= 0:
                ids = chat.ids_below(below_bound, add_offset + limit)[add_offset:]
            else:
                above = chat.ids_from(offset_id or chat.top_id + 1, -add_offset)[::-1] if offset_id else []
                ids = (above + chat.ids_below(below_bound, max(0, limit + add_offset)))[:limit]
        return [i for i in ids if i > min_id and (not max_id or i < max_id)]

    def _on_GetHistoryRequest(self, account: Account, r: Any) -> TLObject:
        chat = self._chat(r.peer)
        ids = self._window(chat, r.offset_id, r.add_offset, r.limit, r.min_id, r.max_id)
        if r.offset_date and r.offset_date.timestamp() > 0 and not r.offset_id:  # None goes on the wire as 0
            ids = [i for i in ids if chat.date_of(i) < r.offset_date]
        return self._page(chat, ids)

    def _on_GetMessagesRequest(self, account: Account, r: Any) -> TLObject:
        chat = self._chat(r.channel)
        wanted = [getattr(i, "id", 0) for i in r.id]
        messages = [chat.message(i) if chat.exists(i) else types.MessageEmpty(id=i) for i in wanted]
        return types.messages.ChannelMessages(pts=1, count=len(messages), messages=messages, topics=[],
                                              chats=[chat.tl()], users=[])

    def _thread(self, r: Any) -> tuple[SimChat, SimChat, int, list[int]]:
        chat = self._chat(r.peer)
        if chat.linked is None or r.msg_id not in chat.threads or not chat.exists(r.msg_id):
            raise ServerError(400, "MSG_ID_INVALID")
        root, comments = chat.threads[r.msg_id]
        return chat, chat.linked, root, comments

    def _on_GetDiscussionMessageRequest(self, account: Account, r: Any) -> TLObject:
        chat, group, root, comments = self._thread(r)
        live = [c for c in comments if group.exists(c)]
        return types.messages.DiscussionMessage(messages=[group.message(root)], unread_count=0,
                                                chats=[group.tl(), chat.tl()], users=[COMMENTER],
                                                max_id=max(live) if live else None)

    def _on_GetRepliesRequest(self, account: Account, r: Any) -> TLObject:
        chat, group, root, comments = self._thread(r)
        pool = sorted((c for c in comments if group.exists(c)), reverse=True)
        ids = self._window(group, r.offset_id, r.add_offset, r.limit, r.min_id, r.max_id, pool=pool)
        return self._page(group, ids, extra_chats=[chat])

    def _on_InitTakeoutSessionRequest(self, account: Account, r: Any) -> TLObject:
        self.takeouts += 1
        return types.account.Takeout(id=4242)

    def _on_FinishTakeoutSessionRequest(self, account: Account, r: Any) -> bool:
        return True

    def _on_GetFileRequest(self, account: Account, r: Any) -> TLObject:
        loc = r.location
        msg_id = (getattr(loc, "id", 0) or 0) - 10_000_000
        size = next((c.media_bytes for c in self.chats.values() if c.generated), 2048)
        blob = hashlib.sha256(str(msg_id).encode()).digest() * (size // 32 + 1)
        blob = blob[:size]
        chunk = blob[r.offset: r.offset + r.limit]
        return types.upload.File(type=types.storage.FileJpeg(), mtime=int(time.time()), bytes=chunk)


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


def iter_existing(chat: SimChat) -> Iterator[int]:
    """Every existing message id, ascending (for assertions)."""
    return iter(chat.ids_from(1, 10**9)) if chat.generated else iter(sorted(i for i in chat.explicit if chat.exists(i)))
