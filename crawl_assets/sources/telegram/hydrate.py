"""Hydration of a Telegram id list (the ``id_list`` kind): ``CHANNEL:MESSAGE`` pairs re-fetched by
``channels.getMessages``, up to 100 ids of one channel a request, on the sync's connected client and pace.

``CHANNEL`` is a username (``@news`` or ``news``) or the numeric channel id a record key holds
(``telegram:CHANNEL:MESSAGE``, what a release's ``ids.jsonl`` lists). A numeric id needs its access hash: it
resolves from the client's entity cache, else from the account's dialogs (the chats it joined, read once a
run); one that does not is out of reach. What comes back is stored as raw lines of format ``telegram``: each
``Message`` as received; each ``MessageEmpty`` (Telegram's answer for a deleted id) a deletion line with
``reason: not_found``; every id of a channel out of reach a line with the reason (``channel_private``,
``channel_unknown``), so the normalizer records why each is gone. A username that resolves to nothing has no
channel id to key its ids by: they are counted and named in the metadata (``ids_unresolved``).

State (the checkpoint): ``v``, ``list`` (the list's SHA-256; a changed file starts over), ``next`` (ids before
it are stored). Lines are written and the state saved every ``pages_per_batch`` requests, and before an error
propagates, so a crash re-fetches nothing already stored.
"""

from __future__ import annotations

import copy
from collections import Counter
from datetime import datetime, timezone
from typing import Any

from telethon import errors as tl_errors
from telethon.tl import functions, types

from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.sync import SyncResult
from crawl_assets.sdk.id_lists import IdList, read_id_list
from crawl_assets.sources.telegram.client import CrawlClient
from crawl_assets.sources.telegram.options import RunLimits
from crawl_assets.sources.telegram.rawlines import deletion_line, message_line
from crawl_assets.sources.telegram.sync import Sink, TelegramStats

LOOKUP_IDS = 100
SHOWN = 20


def split_pair(text: str) -> tuple[str, int] | None:
    """(channel, message id) of ``CHANNEL:MESSAGE``; None when it is not one."""
    channel, sep, message = text.rpartition(":")
    channel = channel.removeprefix("@")
    if not sep or not message.isascii() or not message.isdigit() or not 0 < int(message) < 2**31:
        return None
    if channel.startswith("-100") and channel[4:].isdigit():
        channel = channel[4:]  # the "marked" form of a channel id
    if channel.isascii() and (channel.isdigit() and 0 < int(channel) < 2**52 or
                              (5 <= len(channel) <= 32 and channel.replace("_", "a").isalnum())):
        return channel.lower() if not channel.isdigit() else channel, int(message)
    return None


def is_pair(text: str) -> bool:
    return split_pair(text) is not None


def from_release_key(item: dict[str, Any]) -> str | None:
    """A release's ids-only line names a Telegram message by its key, ``telegram:CHANNEL:MESSAGE``."""
    key = item.get("key")
    return key.removeprefix("telegram:") if isinstance(key, str) and key.startswith("telegram:") else None


class _Hydration:
    def __init__(self, client: CrawlClient, ids: IdList, state: dict[str, Any], sink: Sink, budget: RunLimits,
                 now: datetime):
        self.client, self.ids, self.sink, self.budget, self.now = client, ids, sink, budget, now
        self.state = ids.resume(state)
        self.stats = TelegramStats()
        self.gone: Counter[str] = Counter()
        self.unresolved: list[str] = []
        self.peers: dict[str, Any] = {}  # channel -> InputChannel, or the reason it is out of reach
        self.dialogs: dict[int, Any] | None = None
        self.lines: list[bytes] = []
        self.requests = 0

    async def _from_dialogs(self, channel_id: int) -> Any:
        if self.dialogs is None:
            got = await self.client(functions.messages.GetDialogsRequest(
                offset_date=None, offset_id=0, offset_peer=types.InputPeerEmpty(), limit=100, hash=0))
            self.dialogs = {c.id: "channel_private" if isinstance(c, types.ChannelForbidden)
                            else types.InputChannel(c.id, c.access_hash) for c in getattr(got, "chats", ())
                            if isinstance(c, (types.Channel, types.ChannelForbidden)) and c.access_hash is not None}
        return self.dialogs.get(channel_id)

    async def _peer(self, channel: str) -> tuple[Any, int | None, str | None]:
        """(``InputChannel`` or None, the channel's id when known, why it is out of reach or None)."""
        if channel not in self.peers:
            self.peers[channel] = await self._resolve(channel)
        return self.peers[channel]

    async def _resolve(self, channel: str) -> tuple[Any, int | None, str | None]:
        known = int(channel) if channel.isdigit() else None
        try:
            if known is not None:
                try:
                    peer = await self.client.get_input_entity(types.PeerChannel(known))
                    return types.InputChannel(peer.channel_id, peer.access_hash), known, None
                except ValueError:  # not met in this run: the chats the account is in (or was removed from)
                    found = await self._from_dialogs(known)
                    if isinstance(found, types.InputChannel):
                        return found, known, None
                    return None, known, found or "channel_unknown"
            entity = await self.client.get_entity(channel)
        except (tl_errors.UsernameNotOccupiedError, tl_errors.UsernameInvalidError, ValueError):
            return None, known, "unresolved"
        if isinstance(entity, types.ChannelForbidden):
            return None, entity.id, "channel_private"
        if isinstance(entity, types.Channel):
            return types.InputChannel(entity.id, entity.access_hash), entity.id, None
        return None, None, "unresolved"  # a user or a basic group: not a channel

    def _out_of_reach(self, channel_id: int, messages: list[int], reason: str) -> None:
        peer = types.PeerChannel(channel_id)
        self.lines += [deletion_line(peer, m, self.now, reason=reason) for m in messages]
        self.gone[reason] += len(messages)

    async def _lookup(self, channel: str, messages: list[int]) -> None:
        peer, channel_id, reason = await self._peer(channel)
        if peer is None:
            if channel_id is None:  # nothing to key a record by: named in the metadata
                self.unresolved += [f"{channel}:{m}" for m in messages]
            else:
                self._out_of_reach(channel_id, messages, reason or "unavailable")
            return
        self.requests += 1
        try:
            got = await self.client(functions.channels.GetMessagesRequest(
                channel=peer, id=[types.InputMessageID(m) for m in messages]))
        except tl_errors.ChannelPrivateError:
            self.peers[channel] = (None, peer.channel_id, "channel_private")
            self._out_of_reach(peer.channel_id, messages, "channel_private")
            return
        answered = set()
        for m in got.messages:
            answered.add(m.id)
            if isinstance(m, types.MessageEmpty):
                self._out_of_reach(peer.channel_id, [m.id], "not_found")
            else:
                self.lines.append(message_line(m))
                self.stats.fetched += 1
                self.stats.new += 1
        missing = [m for m in messages if m not in answered]
        if missing:  # Telegram answers every id asked; one it leaves out is named, not guessed at
            self.unresolved += [f"{channel}:{m}" for m in missing]

    def _store(self) -> None:
        if self.lines:
            self.sink.write(self.lines, kind="hydrate", extra={})
            self.stats.batches += 1
            self.lines = []
        self.sink.checkpoint(copy.deepcopy(self.state))
        self.stats.checkpoints += 1

    async def run(self) -> SyncResult:
        ids, since_store = self.ids.ids, 0
        try:
            while self.state["next"] < len(ids):
                if self.requests >= self.budget.max_pages:
                    self.stats.budget_exhausted = True
                    break
                channel, first = split_pair(ids[self.state["next"]]) or ("", 0)
                messages = [first]
                end = self.state["next"] + 1
                while end < len(ids) and len(messages) < LOOKUP_IDS:
                    pair = split_pair(ids[end])
                    if pair is None or pair[0] != channel:
                        break
                    messages.append(pair[1])
                    end += 1
                before = self.requests
                await self._lookup(channel, messages)
                self.state["next"] = end
                since_store += self.requests - before
                if since_store >= max(1, self.budget.pages_per_batch):
                    self._store()
                    since_store = 0
        except BaseException:
            if self.lines:
                self._store()  # what was fetched stays fetched
            raise
        self._store()
        self.stats.complete = self.state["next"] >= len(ids)
        self.stats.extra = {"ids_requested": self.state["next"], "ids_found": self.stats.new,
                            "ids_gone": sum(self.gone.values()), "ids_unresolved": len(self.unresolved),
                            "ids_unresolved_list": ", ".join(self.unresolved[:SHOWN]), "complete": self.stats.complete,
                            **{f"gone_{k}": v for k, v in sorted(self.gone.items())}}
        return SyncResult(self.state, self.stats)


async def run_hydrate(client: CrawlClient, entry: SourceEntry, state: dict[str, Any] | None, sink: Sink,
                      budget: RunLimits, *, now: datetime | None = None) -> SyncResult:
    """Hydrate the entry's id list from the saved state, as far as the budget's requests allow."""
    ids = read_id_list(entry, is_pair, "a CHANNEL:MESSAGE pair", pick=from_release_key)
    result = await _Hydration(client, ids, state or {}, sink, budget, now or datetime.now(timezone.utc)).run()
    result.stats.extra.update(ids.metadata())
    return result
