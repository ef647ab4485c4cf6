"""The ``web_channel`` kind: a public channel read from its web preview pages (``t.me/s/<channel>``), no account.

Declared as a pull spec on the shared kit (``WEB_KIND``: the client, the engine, the raw format); the engine is a
plain ``sync(client, entry, state, store, budget)`` run by ``sdk.sync.run_engine``, so a page is in the lake
before the cursor that covers it is saved. Cursor (``WebCursor``)::

    newest_id, oldest_id   every message between them that the pages showed is stored
    history_complete       the backfill reached the channel's first message (or the horizon)
    window                 the ids of the newest page as last read (its vanished ids are deletions)

One sync: (1) the newest page, always (new posts, and fresh views, reactions and edits of the newest ones);
when more arrived since the last sync than it shows, the gap is read oldest first (``?after=newest_id``) and the
newest page is stored only once the gap is closed, so ``newest_id`` never jumps over unread messages; (2) the
backfill below ``oldest_id`` (``?before=``) down to the horizon, a batch of pages per checkpoint.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson

from crawl_assets.normalize.build import wrap_line
from crawl_assets.core.catalog import PullSpec, resolve
from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.errors import PermanentError, SourceConfigError
from crawl_assets.sdk.http import Page
from crawl_assets.sdk.sync import (Budget, CollectEnv, Collected, PageBuffer, StoreBatch, SyncResult, SyncStats, opened,
                                   require_kind, run_engine, sync_metadata)
from crawl_assets.sources.telegram.tme_links import channel_name
from crawl_assets.sources.telegram.web_client import TelegramWebClient, new_client
from crawl_assets.sources.telegram.web_page import WebPage, parse_page

FORMAT = "telegram-web"
KIND = "web_channel"
WEB_KIND = PullSpec(sync="crawl_assets.sources.telegram.web_sync:sync_web", raw_format=FORMAT,
                    client="crawl_assets.sources.telegram.web_sync:open_client")
VERSION = 1
API_ONLY_OPTIONS = ("comments", "download_media", "takeout")  # need an account: refused for a web_channel


@dataclass
class WebBudget(Budget):
    """Pages per run (``max_pages``) and per raw batch, i.e. per checkpoint (``pages_per_batch``)."""

    pages_per_batch: int = 5


@dataclass
class WebCursor:
    newest_id: int = 0
    oldest_id: int = 0
    history_complete: bool = False
    complete_horizon_days: int | None = None
    newest_date: str | None = None
    chat_id: str | None = None
    window: list[int] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "WebCursor":
        """A saved cursor; another version or shape starts over (the lake is never overwritten)."""
        if not data or data.get("v") != VERSION:
            return cls()
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "v": VERSION}

    def horizon_done(self, horizon_days: int | None) -> bool:
        if not self.history_complete:
            return False
        return self.complete_horizon_days is None or (horizon_days is not None and horizon_days <= self.complete_horizon_days)


def open_client(resource: Any, entry: SourceEntry) -> TelegramWebClient:
    """The client of one sync (``WEB_KIND.client``): the resource's web base URL and page interval."""
    return new_client(resource.web_base_url, interval=resource.web_request_interval_seconds,
                      timeout_seconds=resource.web_timeout_seconds)


class _WebSync:
    def __init__(self, client: TelegramWebClient, entry: SourceEntry, state: dict[str, Any], store: StoreBatch,
                 budget: WebBudget, clock: Callable[[], float]):
        require_kind(entry, KIND, "Telegram web")
        options = entry.typed_options
        used = [name for name in API_ONLY_OPTIONS if getattr(options, name)]
        if used:
            raise SourceConfigError(f"source {entry.key}: {', '.join(used)} need an account; a web_channel source "
                                    "reads only what the public preview shows")
        channel = channel_name(entry.identifier)
        if channel is None:
            raise SourceConfigError(f"source {entry.key}: identifier {entry.identifier!r} names no public channel "
                                    "(a username, @username or t.me link)"[:300])
        self.client, self.entry, self.channel, self.budget, self.clock = client, entry, channel, budget, clock
        self.cursor = WebCursor.from_dict(state)
        self.stats = SyncStats()
        self.store, self.stored_state = store, state
        self.buffer = PageBuffer(self._store, self.stats, budget.pages_per_batch)
        self.fetched_pages = 0

    def _store(self, lines: list[bytes], state: dict[str, Any], info: dict[str, Any]) -> None:
        self.store(lines, state, info)
        self.stored_state = state

    # -- pages ---------------------------------------------------------------------------------
    def _fetch(self, *, before: int | None = None, after: int | None = None) -> tuple[Page, WebPage]:
        page = self.client.page(self.channel, before=before, after=after)
        self.fetched_pages += 1
        html = page.body.decode("utf-8", "replace")
        parsed = parse_page(html)
        if not parsed.is_preview:
            raise PermanentError(f"telegram web s/{self.channel}: the answer is no channel preview page",
                                 endpoint=page.endpoint)
        self.cursor.chat_id = next((m.chat_id for m in parsed.messages if m.chat_id), None) or self.cursor.chat_id
        return page, parsed

    def _line(self, page: Page, parsed: WebPage, **crawl: Any) -> bytes:
        body = orjson.dumps(page.body.decode("utf-8", "replace"))
        fields = {k: v for k, v in crawl.items() if v}
        if self.cursor.chat_id:
            fields["chat_id"] = self.cursor.chat_id
        return wrap_line(body, endpoint=page.endpoint, web_channel=self.channel,
                         retrieved_at=datetime.fromtimestamp(self.clock(), timezone.utc).isoformat(), **fields)

    def _count(self, parsed: WebPage, new: set[int]) -> None:
        for m in parsed.messages:
            self.stats.fetched += 1
            if m.id in new:
                self.stats.new += 1
            elif not m.service:
                self.stats.updated += 1
            if m.date:
                self.stats.saw(datetime.fromisoformat(m.date))

    def _allowed(self) -> bool:
        return self.budget.allows(self.client.stats, self.clock, pages=self.fetched_pages)

    # -- the run -------------------------------------------------------------------------------
    def run(self) -> SyncResult[SyncStats]:
        if self._top():
            self._backfill()
        if self.buffer.lines or self.cursor.to_dict() != self.stored_state:  # no checkpoint saved twice
            self.buffer.flush(self.cursor.to_dict())
        self.stats.complete = self.cursor.horizon_done(self.entry.policy.history_horizon_days)
        self.stats.extra.update(newest_id=self.cursor.newest_id, oldest_id=self.cursor.oldest_id,
                                history_complete=self.cursor.history_complete)
        return SyncResult(self.cursor.to_dict(), self.stats)

    def _top(self) -> bool:
        """The newest page (and the gap below it); False when the budget ran out before the gap closed."""
        c = self.cursor
        page, top = self._fetch()
        ids = [m.id for m in top.messages]
        if not ids:
            self._add(page, top, set(), kind="top")
            c.history_complete, c.complete_horizon_days = True, self.entry.policy.history_horizon_days
            return False
        if c.newest_id and min(ids) > c.newest_id + 1 and not self._fill_gap(below=min(ids)):
            self.stats.extra["gap_open"] = True
            return False
        low, high = min(ids), max(ids)
        vanished = sorted(i for i in c.window if low <= i <= high and i not in set(ids)) if c.newest_id else []
        new = {i for i in ids if i > c.newest_id}
        first = not c.newest_id
        c.newest_id = max(c.newest_id, high)
        if first:
            c.oldest_id = low
            if top.before is None:
                self._history_done()
        c.window = ids
        self.stats.deleted += len(vanished)
        self._add(page, top, new, kind="top", vanished=vanished)
        return True

    def _fill_gap(self, below: int) -> bool:
        """Store every message between ``newest_id`` and ``below``, oldest first; False when the budget ran out."""
        c = self.cursor
        while c.newest_id + 1 < below:
            if not self._allowed():
                return False
            after = c.newest_id
            page, parsed = self._fetch(after=after)
            ids = [m.id for m in parsed.messages if after < m.id < below]
            if not ids:
                return True  # nothing more between them (deleted meanwhile)
            c.newest_id = max(ids)
            self._add(page, parsed, set(ids), kind="forward", after=after)
        return True

    def _backfill(self) -> None:
        c = self.cursor
        horizon = self.entry.policy.history_horizon_days
        if c.horizon_done(horizon):
            return
        cutoff = datetime.fromtimestamp(self.clock(), timezone.utc) - timedelta(days=horizon) if horizon else None
        while self._allowed():
            before = c.oldest_id
            page, parsed = self._fetch(before=before)
            ids = [m.id for m in parsed.messages if m.id < before]
            dates = [datetime.fromisoformat(m.date) for m in parsed.messages if m.date and m.id in ids]
            done = not ids or parsed.before is None or (cutoff is not None and dates and min(dates) < cutoff)
            if done:  # stored with the page that ends the history
                self._history_done()
            if ids:
                c.oldest_id = min(ids)
                self._add(page, parsed, set(ids), kind="backfill", before=before)
            if done:
                return

    def _history_done(self) -> None:
        self.cursor.history_complete = True
        self.cursor.complete_horizon_days = self.entry.policy.history_horizon_days

    def _add(self, page: Page, parsed: WebPage, new: set[int], *, kind: str, **crawl: Any) -> None:
        self._count(parsed, new)
        newest = max((m.date for m in parsed.messages if m.id == self.cursor.newest_id and m.date), default=None)
        if newest:
            self.cursor.newest_date = newest
        self.buffer.add(self._line(page, parsed, **crawl), self.cursor.to_dict(), kind=kind)


def sync_web(client: TelegramWebClient, entry: SourceEntry, state: dict[str, Any], store: StoreBatch, budget: WebBudget,
             *, clock: Callable[[], float] = time.time) -> SyncResult[SyncStats]:
    """One sync of a ``web_channel`` source (see the module docstring)."""
    return _WebSync(client, entry, state, store, budget, clock).run()


def collect_web(resource: Any, entry: SourceEntry, env: CollectEnv) -> Collected:
    """The live collector of ``web_channel`` sources (``TelegramResource``'s web settings and budget)."""
    started = time.time()
    client = opened(lambda: resolve(WEB_KIND.client)(resource, entry))
    sync = resolve(WEB_KIND.sync)
    budget = WebBudget(max_pages=resource.max_pages_per_run, pages_per_batch=resource.pages_per_checkpoint)
    try:
        result, batches = run_engine(entry, env, WEB_KIND.raw_format,
                                     lambda state, store: sync(client, entry, state, store, budget),
                                     rate_limit_retries=resource.flood_retries)
    finally:
        client.http.close()
    meta = sync_metadata(result.stats, client.stats, started)
    meta["checkpoints_saved"] = env.checkpointer.saves
    env.log.info(f"{entry.key}: {result.stats.fetched} messages on {result.stats.pages} pages in {len(batches)} "
                 f"batches, complete={result.stats.complete}")
    return Collected(batches, meta)
