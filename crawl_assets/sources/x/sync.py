"""The X sync engine: cursors, pagination, backfill windows and thread completion, without Dagster.

State (the checkpoint, small JSON) between and inside runs::

    user        {"identifier", "id", "username"}      account timelines: resolved once
    page_size   max_results that X accepted
    newest_id   forward cursor: everything up to this id is stored (next sync asks since_id)
    anchor      search sources: the moment that splits forward (>= anchor) from backfill (< anchor)
    pass        an unfinished forward pagination: params, next token, newest/oldest id so far
    backfill    search windows walked from ``anchor`` down to the horizon: {end, token, done}
    recent      ids of the newest stored posts (``policy.refresh_window`` of them, opt-in), re-read by id once
                a sync has caught up: counters move and posts get deleted after they were collected

Pages are buffered and handed to ``store`` every ``pages_per_batch`` pages together with the state
that covers them; ``store`` must make the lines durable *then* save the state. On any error the
buffer is stored first, so pages already fetched are never fetched again. A sync with nothing new
costs one request, plus one lookup per 100 posts of the refresh window. A post the lookup no longer
finds is recorded as a deletion line (``{"_": "crawl_assets.deleted", ...}``, as for Telegram), next
to the lookup page itself as received.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson

from crawl_assets.normalize.build import DELETED
from crawl_assets.registry import SourceEntry, SourceKind
from crawl_assets.sdk.http import Page
from crawl_assets.sdk.sync import Budget, PageBuffer, StoreBatch, SyncResult
from crawl_assets.sources.x.client import SEARCH_ALL, SEARCH_RECENT, USER_TWEETS, XClient
from crawl_assets.sdk.errors import BadRequest
from crawl_assets.sources.x.ids import id_time, max_id, parse_time, rfc3339
from crawl_assets.sources.x.plan import PAGE_LIMITS, SyncPlan
from crawl_assets.sources.x.threads import PageRefs, ThreadMemory

STATE_VERSION = 1
REFRESH_DEFAULT = 0  # X bills every post read: re-reading stored posts is opt-in (policy.refresh_window)
NOT_FOUND = "https://api.twitter.com/2/problems/resource-not-found"
RECENT_DAYS = 7
MAX_WINDOW_HOURS = 24 * 365 * 2
ARCHIVE_START = datetime(2006, 3, 21, tzinfo=timezone.utc)
TOKEN_PARAMS = frozenset({"pagination_token", "next_token"})
_BETWEEN = re.compile(r"between (\d+) and (\d+)")


@dataclass
class XStats:
    """What an X sync saw (its pages, posts, parents, refreshes and gaps), in the run's metadata."""

    pages: int = 0
    posts: int = 0
    batches: int = 0
    parents_requested: int = 0
    parents_found: int = 0
    parents_missing: int = 0
    page_size_reduced: int = 0
    tokens_replaced: int = 0  # refused next tokens replaced by until_id
    refreshed: int = 0  # stored posts re-read by id
    refresh_gone: int = 0  # of those, no longer there (deleted, or made unavailable)
    gaps: list[str] = field(default_factory=list)
    complete: bool = False  # forward pass and backfill both reached their ends


class _Sync:
    def __init__(self, client: XClient, entry: SourceEntry, state: dict[str, Any], store: StoreBatch,
                 budget: Budget, memory: ThreadMemory | None, now: datetime, clock: Callable[[], float]):
        self.client, self.entry, self.budget, self.memory = client, entry, budget, memory
        self.opts = SyncPlan.of(entry)
        self.state = _fresh(state, entry, now)
        self.now, self.clock = now, clock
        self.stats = XStats()
        self.buffer = PageBuffer(store, self.stats, self.opts.pages_per_batch)
        self.refs = PageRefs()
        self.fetched: set[str] = set()  # ids this sync stored: fresh, not re-read

    # -- helpers ---------------------------------------------------------------------------------
    def horizon(self) -> datetime:
        """Oldest time the backfill reaches: the policy's horizon, bounded by what the endpoint serves."""
        days = self.entry.policy.history_horizon_days
        floor = self.now - timedelta(days=days) if days else ARCHIVE_START
        if self.opts.endpoint == SEARCH_RECENT:
            floor = max(floor, self.recent_floor())
        return floor

    def recent_floor(self) -> datetime:
        """Oldest time recent search still serves (a minute of slack for clock skew)."""
        return self.now - timedelta(days=RECENT_DAYS) + timedelta(minutes=1)

    def path(self) -> str:
        if self.opts.endpoint == USER_TWEETS:
            return f"/2/users/{self.state['user']['id']}/tweets"
        return "/2/tweets/search/all" if self.opts.endpoint == SEARCH_ALL else "/2/tweets/search/recent"

    def fetch(self, params: dict[str, Any], token: str | None) -> Page:
        """One page; a 400 about ``max_results`` lowers the page size and asks again."""
        endpoint = self.opts.endpoint
        query: dict[str, Any] = dict(params)
        if endpoint == USER_TWEETS:
            if self.opts.exclude:
                query["exclude"] = self.opts.exclude
        else:
            query["query"] = self.entry.identifier
        if token:
            query["pagination_token" if endpoint == USER_TWEETS else "next_token"] = token
        while True:
            query["max_results"] = self.state.get("page_size") or self.opts.page_size
            try:
                page = self.client.posts(endpoint, self.path(), query)
            except BadRequest as err:
                if "max_results" not in err.parameters:
                    raise
                self.state["page_size"] = _smaller(query["max_results"], err.parameters["max_results"], endpoint, err)
                self.stats.page_size_reduced += 1
                continue
            self.stats.pages += 1
            self.stats.posts += len(page.json.get("data") or [])
            if self.opts.complete_threads:
                self.refs.add_page(page.json)
            return page

    def may_request(self) -> bool:
        return self.budget.allows(clock=self.clock, pages=self.stats.pages)

    def keep(self, page: Page, phase: str) -> None:
        """Buffer a page that holds posts; store every few pages (state already covers it)."""
        if page.json.get("data"):
            self.buffer_page(page, phase)
            self.remember(page)
        if len(self.buffer.lines) >= self.opts.pages_per_batch:
            self.buffer.flush(self.state, only_lines=True)

    def buffer_page(self, page: Page, phase: str) -> None:
        """One page as one raw line (JSON never needs a raw newline; X sends none, but a line must hold
        exactly one page); batches are flushed by line count here, and never mix phases."""
        if self.buffer.info.get("phase") not in (None, phase):
            raise RuntimeError("flush before switching phase")
        self.buffer.add(page.body.replace(b"\r", b" ").replace(b"\n", b" "), self.state, page=False,
                        phase=phase, endpoint=page.endpoint, pages=len(self.buffer.lines) + 1)

    def remember(self, page: Page) -> None:
        """Track the newest stored ids for the refresh window (in the state saved with this page)."""
        ids = [str(t["id"]) for t in page.json.get("data") or () if isinstance(t, dict) and t.get("id")]
        self.fetched.update(ids)
        window = self.entry.policy.refresh_items(REFRESH_DEFAULT)
        if window:
            merged = set(self.state.get("recent") or ()) | set(ids)
            self.state["recent"] = sorted(merged, key=lambda i: (len(i), i), reverse=True)[:window]

    # -- phases -----------------------------------------------------------------------------------
    def resolve_user(self) -> None:
        if self.opts.endpoint != USER_TWEETS or self.state.get("user"):
            return
        ident = self.entry.identifier.strip().lstrip("@")
        if ident.isdigit():
            self.state["user"] = {"identifier": self.entry.identifier, "id": ident, "username": None}
        else:
            user = self.client.user_by_username(ident)
            self.state["user"] = {"identifier": self.entry.identifier, "id": str(user["id"]),
                                  "username": user.get("username")}
        self.buffer.flush(self.state)

    def forward(self) -> bool:
        """Everything newer than ``newest_id`` (first sync: from the anchor or the horizon). True when done."""
        p = self.state.get("pass")
        if p is None:
            params: dict[str, Any] = {}
            if self.state.get("newest_id"):
                params["since_id"] = self.state["newest_id"]
            elif self.opts.endpoint == USER_TWEETS:
                if self.entry.policy.history_horizon_days:
                    params["start_time"] = rfc3339(self.horizon())
            else:
                params["start_time"] = self.state.get("forward_from") or self.state["anchor"]
            p = {"params": params, "token": None, "newest_id": None, "oldest_id": None}
        while self.may_request():
            params = self._recent_bounds(p["params"])
            try:
                page = self.fetch(params, p["token"])
            except BadRequest as err:
                if not (p["token"] and p["oldest_id"] and TOKEN_PARAMS & set(err.parameters)):
                    raise
                # a refused token: go on below the oldest post stored (``until_id`` is exclusive)
                p["params"] = {**p["params"], "until_id": p["oldest_id"]}
                p["token"] = None
                self.stats.tokens_replaced += 1
                continue
            meta = page.json.get("meta") or {}
            if page.json.get("data"):
                p["newest_id"] = p["newest_id"] or meta.get("newest_id")
                p["oldest_id"] = meta.get("oldest_id") or p["oldest_id"]
            p["token"] = meta.get("next_token")
            if p["token"]:
                self.state["pass"] = p
                self.keep(page, "forward")
                continue
            self.state["pass"] = None
            self.state["newest_id"] = max_id(self.state.get("newest_id"), p["newest_id"])
            if not self.state["newest_id"] and "start_time" in p["params"] and self.opts.endpoint != USER_TWEETS:
                # nothing matched up to now: the next forward pass need not look before this sync
                self.state["forward_from"] = rfc3339(self.now - timedelta(seconds=30))
            if self.opts.endpoint == USER_TWEETS:
                self.state["backfill"] = {"done": True}
            self.keep(page, "forward")
            return True
        self.state["pass"] = p
        return False

    def _gap(self, message: str) -> None:
        """A gap goes into the sync's metadata and into the manifest of the raw batch written next (releases'
        datasheets read it from there)."""
        self.stats.gaps.append(message)
        self.buffer.info["gaps"] = [*self.buffer.info.get("gaps", ()), message]

    def _recent_bounds(self, params: dict[str, Any]) -> dict[str, Any]:
        """Recent search serves 7 days: an older cursor is clamped and the gap recorded, not hidden."""
        if self.opts.endpoint != SEARCH_RECENT:
            return params
        floor = self.recent_floor()
        out = dict(params)
        if "start_time" in out and parse_time(out["start_time"]) < floor:
            self._gap(f"posts before {rfc3339(floor)} fell out of recent search (start_time)")
            out["start_time"] = rfc3339(floor)
        if "since_id" in out:
            if id_time(out["since_id"]) < floor:
                self._gap(f"posts between {rfc3339(id_time(out['since_id']))} and {rfc3339(floor)} "
                          "fell out of recent search")
                out = {k: v for k, v in out.items() if k != "since_id"}
                out["start_time"] = rfc3339(floor)
        return out

    def backfill(self) -> bool:
        """Search history in time windows from the anchor down to the horizon. True when done."""
        bf = self.state.setdefault("backfill", {"end": self.state.get("anchor"), "token": None, "done": False})
        if bf.get("done"):
            return True
        self.buffer.flush(self.state, only_lines=True)  # phases never share a batch
        floor = self.horizon()
        while True:
            end = parse_time(bf["end"])
            if end <= floor:
                bf.update(done=True, token=None)
                return True
            if not self.may_request():
                return False
            if not bf.get("start"):
                span = timedelta(hours=bf.get("span_hours") or self.opts.window / timedelta(hours=1))
                bf["start"] = rfc3339(max(end - span, floor))
            start = max(parse_time(bf["start"]), floor)
            if start >= end:
                bf.update(done=True, token=None)
                return True
            page = self.fetch({"start_time": rfc3339(start), "end_time": rfc3339(end)}, bf.get("token"))
            bf["token"] = (page.json.get("meta") or {}).get("next_token")
            bf["seen"] = bf.get("seen", 0) + len(page.json.get("data") or [])
            if not bf["token"]:
                bf.update(end=rfc3339(start), start=None, span_hours=self._next_span(bf), seen=0)
            self.keep(page, "backfill")

    def _next_span(self, bf: dict[str, Any]) -> float:
        """An empty window doubles the next one (sparse queries cross years in a few requests);
        a window with posts goes back to the configured size."""
        base = self.opts.window / timedelta(hours=1)
        if bf.get("seen"):
            return base
        return min((bf.get("span_hours") or base) * 2, MAX_WINDOW_HOURS)

    def complete_threads(self) -> None:
        """Fetch missing parents once, in bounded batches of 100 ids; remember what was tried."""
        if not self.opts.complete_threads or self.memory is None:
            return
        self.buffer.flush(self.state, only_lines=True)
        known, pending = self.memory.load()
        known |= self.refs.have | self.refs.gone
        todo = list(dict.fromkeys([*pending, *sorted(self.refs.missing(known), key=lambda i: (len(i), i))]))
        todo = [i for i in todo if i not in known]
        budget = self.opts.max_parent_lookups
        while todo and budget > 0 and self.budget.allows(clock=self.clock, pages=0):
            batch, todo = todo[: min(100, budget)], todo[min(100, budget):]
            budget -= len(batch)
            page = self.client.lookup(batch)
            self.stats.parents_requested += len(batch)
            found = PageRefs()
            found.add_page(page.json)
            self.stats.parents_found += len(found.have & set(batch))
            self.stats.parents_missing += len(set(batch) - found.have)
            known |= set(batch) | found.have | found.gone
            queued = set(todo)
            todo += [i for i in sorted(found.missing(known), key=lambda i: (len(i), i)) if i not in queued]
            if page.json.get("data"):
                self.buffer_page(page, "parents")
                self.buffer.flush(self.state, only_lines=True)
            self.memory.save(known, todo)
        self.memory.save(known, todo)

    def refresh(self) -> None:
        """Re-read the newest stored posts by id (100 per request): new counters become a new observation,
        a post the lookup no longer finds becomes a deletion line."""
        window = self.entry.policy.refresh_items(REFRESH_DEFAULT)
        self.state["recent"] = list(self.state.get("recent") or ())[:window]  # the window may have shrunk
        recent = [i for i in self.state["recent"] if i not in self.fetched]
        if not recent or not window:
            return
        self.buffer.flush(self.state, only_lines=True)  # phases never share a batch
        gone: set[str] = set()
        for start in range(0, len(recent), 100):
            if not self.may_request():
                break
            chunk = recent[start:start + 100]
            page = self.client.lookup(chunk)
            self.stats.pages += 1
            found = {str(t.get("id")) for t in page.json.get("data") or () if isinstance(t, dict)}
            missing = sorted({str(e.get("resource_id")) for e in page.json.get("errors") or ()
                              if isinstance(e, dict) and e.get("type") == NOT_FOUND and e.get("parameter") == "ids"
                              and str(e.get("resource_id")) in chunk} - found)
            self.stats.refreshed += len(found & set(chunk))
            self.stats.refresh_gone += len(missing)
            gone.update(missing)
            # saved with this page: a resumed run neither reads nor marks these ids again
            self.state["recent"] = [i for i in self.state["recent"] if i not in gone]
            self.buffer_page(page, "refresh")
            observed = rfc3339(self.now)
            for post_id in missing:
                self.buffer.add(orjson.dumps({"_": DELETED, "id": post_id, "observed_at": observed,
                                              "reason": "not found by id lookup"}), self.state, page=False)
            if len(self.buffer.lines) >= self.opts.pages_per_batch:
                self.buffer.flush(self.state, only_lines=True)
        self.buffer.flush(self.state, only_lines=True)

    def run(self) -> SyncResult:
        try:
            self.resolve_user()
            done = self.forward()
            if done:
                done = self.backfill()
            self.buffer.flush(self.state, only_lines=True)
            self.complete_threads()
            if done:
                self.refresh()
        except BaseException:
            if not self.buffer.broken:
                self.buffer.flush(self.state, only_lines=True)  # what was fetched stays fetched
            raise
        self.stats.complete = done
        self.state["last_sync_at"] = rfc3339(self.now)
        self.buffer.flush(self.state)
        return SyncResult(self.state, self.stats)


def _fresh(state: dict[str, Any], entry: SourceEntry, now: datetime) -> dict[str, Any]:
    """The previous state, or a new one when there is none or it belongs to another identifier."""
    state = copy.deepcopy(state or {})
    if state.get("v") != STATE_VERSION or state.get("identifier") != entry.identifier:
        anchor = rfc3339(now - timedelta(seconds=30))
        state = {"v": STATE_VERSION, "identifier": entry.identifier, "newest_id": None, "pass": None,
                 "anchor": anchor if entry.kind is SourceKind.search_query else None}
    return state


def _smaller(current: int, message: str, endpoint: str, err: BadRequest) -> int:
    """The page size to try after X refused ``current``: its stated maximum, else half."""
    low = PAGE_LIMITS[endpoint][0]
    m = _BETWEEN.search(message)
    size = int(m.group(2)) if m and int(m.group(2)) < current else current // 2
    if size < low:
        raise err
    return size


def sync_source(client: XClient, entry: SourceEntry, state: dict[str, Any], store: StoreBatch, budget: Budget,
                *, memory: ThreadMemory | None = None, now: datetime | None = None,
                clock: Callable[[], float] = time.time) -> SyncResult:
    """Bring one X source up to date (or as far as ``budget`` allows) and return the new state.

    Raises the client's ``SourceError``s after storing what was already fetched; the state saved with the
    last batch resumes the sync exactly where it stopped.
    """
    return _Sync(client, entry, state, store, budget, memory, now or datetime.now(timezone.utc), clock).run()


def stats_metadata(stats: XStats) -> dict[str, Any]:
    return {k: v for k, v in asdict(stats).items() if k != "gaps"} | {"gaps": "; ".join(stats.gaps)}
