"""The simulated Telegram (``World``): chats, accounts, injected faults, and one handler per request type."""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from telethon.tl import TLObject, functions, types

from crawl_assets_tests.standins.telegram_mtproto.accounts import (
    SRP_G, SRP_P, Account, account_key, srp_challenge, srp_expected_m1, srp_verifier,
)
from crawl_assets_tests.standins.telegram_mtproto.chats import COMMENTER, TEMPLATES, SimChat, entities_for
from crawl_assets_tests.standins.telegram_mtproto.errors import ServerError
from crawl_assets_tests.standins.telegram_mtproto.flood import FloodControl
from crawl_assets_tests.standins.telegram_mtproto.forum import ForumHandlers


@dataclass
class Fault:
    """Answer the next ``times`` matching requests (after skipping ``after``) with an error."""

    request: str
    message: str
    code: int = 420
    times: int = 1
    after: int = 0


_BEFORE_LOGIN = ("GetConfigRequest", "SendCodeRequest", "SignInRequest", "GetPasswordRequest", "CheckPasswordRequest",
                 "ImportAuthorizationRequest")


class World(ForumHandlers):
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
        self.network: Any = None  # a ``network.Network``: requests then travel over real sockets
        self.connections: list[str] = []  # Telethon's connection class of every connect, in order
        self.init_proxies: list[Any] = []  # InitConnection's ``proxy`` (InputClientProxy) of every connect
        self._keys: dict[int, str] = {}
        self.serving_dc = 2  # the data centre the request being answered arrived at
        self.flood: FloodControl | None = None  # answer FLOOD_WAIT as Telegram does (``FloodControl``)

    def account_for_key(self, key_id: int) -> Account:
        """The account an auth key id belongs to (0, a key not yet made: the login account; unknown: default)."""
        if not key_id:
            return self.account(self.login_account)
        if key_id not in self._keys:
            self._keys = {account_key(name).key_id: name for name in self.accounts}
        return self.account(self._keys.get(key_id, "default"))

    def account_by_user(self, user_id: int) -> Account:
        return next(a for a in self.accounts.values() if a.user_id == user_id)

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

    def handle(self, account: Account, request: TLObject, dc_id: int = 2) -> Any:
        """Answer ``request`` of ``account`` arriving at data centre ``dc_id``."""
        self.serving_dc = dc_id
        while isinstance(request, (functions.InvokeWithLayerRequest, functions.InitConnectionRequest,
                                   functions.InvokeWithoutUpdatesRequest, functions.InvokeWithTakeoutRequest)):
            if isinstance(request, functions.InitConnectionRequest):
                self.init_proxies.append(request.proxy)
            request = request.query
        name = type(request).__name__
        self.counts[name] += 1
        self.by_account.setdefault(account.name, Counter())[name] += 1
        self.calls.append(name)
        if self.flood is not None:
            self.flood.check(account.name, name)
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
                types.DcOption(id=dc, ip_address=host, port=port) for dc, (host, port) in self.dc_addresses().items()],
            dc_txt_domain_name="standin.invalid", chat_size_max=200, megagroup_size_max=200000, forwarded_count_max=100,
            online_update_period_ms=210000, offline_blur_timeout_ms=5000, offline_idle_timeout_ms=30000,
            online_cloud_timeout_ms=300000, notify_cloud_delay_ms=30000, notify_default_delay_ms=1500,
            push_chat_period_ms=60000, push_chat_limit=2, edit_time_limit=172800, revoke_time_limit=2147483647,
            revoke_pm_time_limit=2147483647, rating_e_decay=2419200, stickers_recent_limit=200,
            channels_read_media_period=604800, call_receive_timeout_ms=20000, call_ring_timeout_ms=90000,
            call_connect_timeout_ms=30000, call_packet_timeout_ms=10000, me_url_prefix="https://t.me/",
            caption_length_max=1024, message_length_max=4096, webfile_dc_id=4)

    def dc_addresses(self) -> dict[int, tuple[str, int]]:
        if self.network is None:
            return {2: ("127.0.0.1", 443), 4: ("127.0.0.1", 443)}
        return {dc: self.network.address(dc) for dc in (2, 4)}

    def _on_ExportAuthorizationRequest(self, account: Account, r: Any) -> TLObject:
        """A one-time token that logs the same user in on another data centre (media on DC 4)."""
        return types.auth.ExportedAuthorization(id=account.user_id, bytes=hashlib.sha256(
            f"export:{account.name}:{r.dc_id}".encode()).digest())

    def _on_ImportAuthorizationRequest(self, account: Account, r: Any) -> TLObject:
        user = self.account_by_user(r.id)
        for dc in (2, 4):
            if secrets.compare_digest(r.bytes, hashlib.sha256(f"export:{user.name}:{dc}".encode()).digest()):
                return types.auth.Authorization(user=user.tl())
        raise ServerError(400, "AUTH_BYTES_INVALID")

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

    def _on_GetDialogsRequest(self, account: Account, r: Any) -> TLObject:
        """The chats the account is in: every one here (the first ``limit``, no paging); one gone private stays
        listed as ``channelForbidden``, as a channel the account was removed from does."""
        joined = list(self.chats.values())[: r.limit or 100]
        dialogs = [types.Dialog(peer=types.PeerChannel(c.id), top_message=c.top_id, read_inbox_max_id=0,
                                read_outbox_max_id=0, unread_count=0, unread_mentions_count=0,
                                unread_reactions_count=0, unread_poll_votes_count=0,
                                notify_settings=types.PeerNotifySettings()) for c in joined]
        tops = [c.message(c.top_id) for c in joined if c.exists(c.top_id) and not c.private]
        chats = [types.ChannelForbidden(id=c.id, access_hash=c.access_hash, title=c.title, broadcast=True) if c.private
                 else c.tl() for c in joined]
        return types.messages.Dialogs(dialogs=dialogs, messages=tops, chats=chats, users=[])

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
        messages = [chat.message(i) if chat.exists(i) else types.MessageEmpty(id=i, peer_id=None) for i in wanted]
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
        home = next((c.media_dc for c in self.chats.values() if c.generated), 2)
        if home != self.serving_dc:  # as Telegram does: ask the client to fetch it from the file's data centre
            raise ServerError(303, f"FILE_MIGRATE_{home}")
        blob = hashlib.sha256(str(msg_id).encode()).digest() * (size // 32 + 1)
        blob = blob[:size]
        chunk = blob[r.offset: r.offset + r.limit]
        return types.upload.File(type=types.storage.FileJpeg(), mtime=int(time.time()), bytes=chunk)
