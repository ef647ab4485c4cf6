"""The sync engine of one Telegram source: forward increment, refresh window, history backfill.

Testable without Dagster: it gets a connected ``CrawlClient``, the registry entry, the saved state, a
``Sink`` that makes raw batches durable and saves checkpoints, and a budget. One sync:

1. reads the **top window** (the newest ``policy.refresh_window`` messages, at least one page): new
   messages above ``newest_id`` are the forward increment; older ones are compared with the fingerprints
   of the previous window: a changed ``edit_date`` or counter is a new observation, an id that vanished
   from a window read completely is a deletion;
2. when more messages arrived than the window holds, fills the gap oldest-first (``min_id`` =
   ``newest_id``, reverse paging), so ``newest_id`` only ever moves over stored messages;
3. continues the **backfill** below ``oldest_id`` (``offset_id``) down to the history horizon.

In a forum supergroup each raw batch carries the titles of its messages' topics for the normalizer (``topics.py``).

Messages are written in batches of a few pages; the cursor is checkpointed right after each batch is
durable, so a kill loses at most one batch of work and never skips a message.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from telethon import errors as tl_errors
from telethon import utils
from telethon.tl import TLObject, functions, types

from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.sync import SyncResult, SyncStats
from crawl_assets.sources.telegram.client import CrawlClient
from crawl_assets.sources.telegram.errors import SourceGone
from crawl_assets.sources.telegram.rawlines import (
    chat_raw,
    chat_summary,
    chat_type,
    deletion_line,
    fingerprint,
    message_line,
    replies_max_id,
)
from crawl_assets.sources.telegram.options import PAGE, RunLimits
from crawl_assets.sources.telegram.spec import TelegramOptions
from crawl_assets.sources.telegram.state import Peer, SyncState
from crawl_assets.sources.telegram.topics import ForumTopics

REFRESH_DEFAULT = 200  # newest messages re-read each sync when the entry sets no refresh_window
PAGED_REQUESTS = ("GetHistoryRequest", "GetRepliesRequest", "GetDiscussionMessageRequest")
MEDIA_TYPES = (types.MessageMediaPhoto, types.MessageMediaDocument)


class Sink(Protocol):
    """Where a sync puts what it read. Each method returns only once its data is durable."""

    def write(self, lines: list[bytes], *, kind: str, extra: dict[str, Any]) -> str: ...

    def checkpoint(self, state: dict[str, Any]) -> None: ...

    def load_window(self) -> dict[int, list[int]]: ...

    def save_window(self, window: dict[int, list[int]]) -> None: ...

    def save_media(self, name: str, data: bytes) -> str: ...

    def load_topics(self) -> dict[int, list[Any]]: ...

    def save_topics(self, topics: dict[int, list[Any]]) -> None: ...


@dataclass
class TelegramStats(SyncStats):
    """The shared counts (``fetched``, ``new``, ``updated``, ``deleted``, ``batches``) and Telegram's own."""

    comments: int = 0
    media_files: int = 0
    checkpoints: int = 0
    budget_exhausted: bool = False
    gap_open: bool = False
    duration_seconds: float = 0.0
    batch_paths: list[str] = field(default_factory=list)


class TelegramSync:
    """One sync of one source (see the module docstring for the order of work)."""

    def __init__(self, client: CrawlClient, entry: SourceEntry, state: dict[str, Any] | None, sink: Sink,
                 budget: RunLimits = RunLimits(), *, now: datetime | None = None):
        self.client = client
        self.api: Any = client  # the takeout proxy when takeout is on
        self.entry = entry
        self.state = SyncState.from_dict(state)
        self.sink = sink
        self.budget = budget
        self.options: TelegramOptions = entry.typed_options  # parsed and validated by the registry
        self.now = now or datetime.now(timezone.utc)
        self.stats = TelegramStats()
        self._pages_at_start = self._pages()
        self.peer: Any = None
        self.peer_tl: TLObject | None = None
        self.topics = ForumTopics(sink)

    # -- budget ------------------------------------------------------------------------------
    def _pages(self) -> int:
        return sum(self.client.request_counts[n] for n in PAGED_REQUESTS)

    def _left(self) -> int:
        """Messages this run may still fetch (the page budget counted in messages)."""
        pages_left = self.budget.max_pages - (self._pages() - self._pages_at_start)
        left = min(self.budget.max_messages - self.stats.fetched, pages_left * PAGE)
        if left <= 0:
            self.stats.budget_exhausted = True
        return max(0, left)

    # -- the run -----------------------------------------------------------------------------
    async def run(self) -> SyncResult[TelegramStats]:
        try:
            await self._run_once()
        except tl_errors.ChannelInvalidError:
            if self.state.peer is None or self.peer is None:
                raise
            # a cached access hash that no longer works (another account, recreated chat): resolve again
            self.state.peer = None
            await self._run_once()
        return SyncResult(self.state.to_dict(), self.stats)

    async def _run_once(self) -> None:
        self.peer = await self._resolve()
        if self.options.takeout:
            async with self.client.takeout(finalize=True, channels=True, megagroups=True) as takeout:
                self.api = takeout
                await self._phases()
        else:
            await self._phases()
        self.state.syncs += 1
        self._checkpoint()

    async def _phases(self) -> None:
        await self._metadata()
        if await self._top_window():
            await self._backfill()

    # -- resolve -----------------------------------------------------------------------------
    async def _resolve(self) -> Any:
        cached = self.state.peer
        if cached is not None and cached.credential == self.client.credential:
            peer = (types.InputPeerChannel(cached.id, cached.access_hash) if cached.kind == "channel"
                    else types.InputPeerChat(cached.id))
            self.peer_tl = utils.get_peer(peer)
            return peer
        ident: Any = self.entry.identifier.strip()
        if ident.lstrip("-").isdigit():
            ident = int(ident)
        try:
            entity = await self.api.get_entity(ident)
        except ValueError as exc:
            if isinstance(ident, int):
                raise SourceGone(f"chat id {ident} is unknown to credential {self.client.credential!r}; "
                                 "register the @username or t.me link instead") from exc
            raise
        if isinstance(entity, (types.ChannelForbidden, types.ChatForbidden)):
            raise SourceGone(f"{self.entry.identifier}: the chat is private or this account was banned from it")
        if isinstance(entity, types.Channel):
            self.state.peer = Peer("channel", entity.id, entity.access_hash or 0, self.client.credential,
                                   bool(entity.megagroup))
            self.state.forum = bool(entity.forum)
        elif isinstance(entity, types.Chat):
            self.state.peer = Peer("chat", entity.id, 0, self.client.credential)
        else:
            raise SourceGone(f"{self.entry.identifier} is a user, not a channel or group")
        peer = utils.get_input_peer(entity)
        self.peer_tl = utils.get_peer(peer)
        return peer

    # -- chat metadata -----------------------------------------------------------------------
    async def _metadata(self) -> None:
        due = self.state.meta_at is None or (
            self.now - datetime.fromisoformat(self.state.meta_at) >= timedelta(hours=self.options.metadata_every_hours)
        )
        if not due:
            return
        if isinstance(self.peer, types.InputPeerChannel):
            full = await self.api(functions.channels.GetFullChannelRequest(self.peer))
        else:
            full = await self.api(functions.messages.GetFullChatRequest(self.peer.chat_id))
        summary = chat_summary(full)
        self._write([], kind="chat", extra={"chat": summary, "chat_full": chat_raw(full)})
        self.state.meta_at = self.now.isoformat()
        self.state.linked_chat_id = summary.get("linked_chat_id")
        self.state.forum = summary["forum"]
        if self.state.peer is not None:
            self.state.peer.megagroup = summary["megagroup"]
        if self.state.forum:
            await self.topics.read_all(self.api, self.peer)

    def _line(self, m: Any) -> bytes:
        """The raw line of a message; in a forum, its topic is noted (and a creation or rename learnt)."""
        own = isinstance(m, (types.Message, types.MessageService)) and m.peer_id == self.peer_tl
        if own:
            if getattr(getattr(m, "reply_to", None), "forum_topic", False):
                self.state.forum = True
            if self.state.forum:
                self.topics.note(m)
        return message_line(m)

    # -- top window: forward increment + refresh ---------------------------------------------
    async def _top_window(self) -> bool:
        """Read the newest messages; True when the run may go on with the backfill."""
        st = self.state
        limit = max(self.entry.policy.refresh_items(REFRESH_DEFAULT), PAGE)
        top = [m async for m in self.api.iter_messages(self.peer, limit=limit, wait_time=0)]
        self.stats.fetched += len(top)
        exhausted = len(top) < limit
        low = 0 if exhausted or not top else top[-1].id
        previous_newest = st.newest_id
        window = self.sink.load_window() if st.anchored else {}

        if not st.anchored:
            new = top
            if top:
                st.oldest_id = top[-1].id
        else:
            new = [m for m in top if m.id > previous_newest]
            if top and not exhausted and low > previous_newest + 1:
                if not await self._fill_gap(previous_newest, low):
                    self.stats.gap_open = True
                    return False
        await self._store_ascending(new, forward=True)
        if not previous_newest and exhausted:
            self._history_done()

        if st.anchored and previous_newest:
            await self._refresh(top, low, window, previous_newest)
        self.sink.save_window({m.id: [fingerprint(m), replies_max_id(m)] for m in top if m.id <= st.newest_id})
        self._checkpoint()
        return True

    async def _refresh(self, top: list[Any], low: int, window: dict[int, list[int]], previous_newest: int) -> None:
        """New observations for edited/recounted messages, deletion markers for vanished ones."""
        seen = {m.id for m in top}
        lines: list[bytes] = []
        for m in reversed(top):
            if m.id > previous_newest or m.id not in window:
                continue
            old_fp, old_replies = window[m.id][0], window[m.id][1]
            if fingerprint(m) != old_fp:
                lines.append(self._line(m))
                self.stats.updated += 1
                if replies_max_id(m) > old_replies:
                    lines.extend(await self._comments(m, since=old_replies))
        vanished = sorted(i for i in window if i >= low and i not in seen and i <= previous_newest)
        lines.extend(deletion_line(self.peer_tl, i, self.now, chat_type(self.state.peer, top)) for i in vanished)
        self.stats.deleted += len(vanished)
        await self.topics.fetch_missing(self.api, self.peer)
        if lines:
            self._write(lines, kind="refresh", extra={"updated": self.stats.updated, "deleted": len(vanished)})

    async def _fill_gap(self, above: int, below: int) -> bool:
        """Store every message with ``above < id < below``, oldest first; False if the budget ran out."""
        limit = self._left()
        if not limit:
            return False
        chunk: list[Any] = []
        got = 0
        async for m in self.api.iter_messages(self.peer, min_id=above, max_id=below, reverse=True,
                                              limit=limit, wait_time=0):
            got += 1
            chunk.append(m)
            if len(chunk) >= self.budget.batch_size:
                await self._store_ascending(chunk, forward=True)
                chunk = []
        self.stats.fetched += got
        await self._store_ascending(chunk, forward=True)
        return got < limit

    async def _store_ascending(self, messages: list[Any], *, forward: bool) -> None:
        """Write messages above ``newest_id`` in ascending batches, advancing ``newest_id`` after each."""
        ordered = sorted(messages, key=lambda m: m.id)
        size = self.budget.batch_size
        for start in range(0, len(ordered), size):
            chunk = ordered[start:start + size]
            lines = await self._lines(chunk)
            self._write(lines, kind="forward" if forward else "backfill", extra={"min_id": chunk[0].id, "max_id": chunk[-1].id})
            self.stats.new += len(chunk)
            self.state.newest_id = max(self.state.newest_id, chunk[-1].id)
            self.state.newest_date = max(self.state.newest_date or "", chunk[-1].date.isoformat())
            self._checkpoint()

    # -- history backfill --------------------------------------------------------------------
    async def _backfill(self) -> None:
        st = self.state
        horizon = self.entry.policy.history_horizon_days
        if st.horizon_done(horizon) or not st.anchored:
            return
        cutoff = self.now - timedelta(days=horizon) if horizon else None
        limit = self._left()
        if not limit:
            return
        chunk: list[Any] = []
        got = 0
        reached_horizon = False
        async for m in self.api.iter_messages(self.peer, offset_id=st.oldest_id, limit=limit, wait_time=0):
            got += 1
            if cutoff is not None and m.date < cutoff:
                reached_horizon = True
                break
            chunk.append(m)
            if len(chunk) >= self.budget.batch_size:
                await self._store_descending(chunk)
                chunk = []
        self.stats.fetched += got
        await self._store_descending(chunk)
        if reached_horizon or got < limit:
            self._history_done()
            self._checkpoint()
        else:
            self.stats.budget_exhausted = True

    async def _store_descending(self, chunk: list[Any]) -> None:
        if not chunk:
            return
        lines = await self._lines(sorted(chunk, key=lambda m: m.id))
        low = min(m.id for m in chunk)
        self._write(lines, kind="backfill", extra={"min_id": low, "max_id": max(m.id for m in chunk)})
        self.stats.new += len(chunk)
        self.state.oldest_id = low
        self._checkpoint()

    def _history_done(self) -> None:
        self.state.history_complete = True
        self.state.complete_horizon_days = self.entry.policy.history_horizon_days

    # -- per message: lines, comments, media ---------------------------------------------------
    async def _lines(self, messages: Iterable[Any]) -> list[bytes]:
        lines: list[bytes] = []
        for m in messages:
            lines.append(self._line(m))
            if self.options.comments and replies_max_id(m):
                lines.extend(await self._comments(m, since=0))
            if self.options.download_media and isinstance(getattr(m, "media", None), MEDIA_TYPES):
                await self._media(m)
        await self.topics.fetch_missing(self.api, self.peer)
        return lines

    async def _comments(self, post: Any, since: int) -> list[bytes]:
        """The discussion thread of a channel post: its copy in the linked group (first time) and comments."""
        if not self.options.comments:
            return []
        lines: list[bytes] = []
        try:
            if since == 0:
                found = await self.api(functions.messages.GetDiscussionMessageRequest(self.peer, post.id))
                lines.extend(message_line(m) for m in found.messages)
            got = 0
            async for c in self.api.iter_messages(self.peer, reply_to=post.id, min_id=since, wait_time=0):
                got += 1
                lines.append(message_line(c))
        except tl_errors.MsgIdInvalidError:
            return []  # the post or its thread went away meanwhile
        self.stats.fetched += got
        self.stats.comments += got
        return lines

    async def _media(self, m: Any) -> None:
        size = getattr(getattr(getattr(m, "media", None), "document", None), "size", None)
        if size is not None and size > self.options.media_max_bytes:
            return
        data = await self.api.download(m)
        if not data or len(data) > self.options.media_max_bytes:
            return
        ext = utils.get_extension(m.media) or ".bin"
        chat = utils.get_peer_id(m.peer_id, add_mark=False)
        self.sink.save_media(f"{chat}/{m.id}{ext}", data)
        self.stats.media_files += 1

    # -- durability --------------------------------------------------------------------------
    def _write(self, lines: list[bytes], *, kind: str, extra: dict[str, Any]) -> None:
        if self.topics.pending and self.state.peer is not None:
            extra = {**extra, "normalize": {"topics": self.topics.batch_titles(self.state.peer.id)}}
        path = self.sink.write(lines, kind=kind, extra=extra)
        self.stats.batches += 1
        self.stats.batch_paths.append(path)

    def _checkpoint(self) -> None:
        self.sink.checkpoint(self.state.to_dict())
        self.stats.checkpoints += 1


async def run_sync(client: CrawlClient, entry: SourceEntry, state: dict[str, Any] | None, sink: Sink,
                   budget: RunLimits = RunLimits(), *, now: datetime | None = None) -> SyncResult:
    """One sync of ``entry`` with a connected client (see ``TelegramSync``)."""
    started = time.monotonic()
    result = await TelegramSync(client, entry, state, sink, budget, now=now).run()
    result.stats.duration_seconds = round(time.monotonic() - started, 3)
    return result
