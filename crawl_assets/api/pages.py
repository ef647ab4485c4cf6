"""Paged record search and the cursors that carry a caller from one page to the next.

A page is a filter, a sort, a page size, and deep pagination with ``search_after`` over a point in time (no
``from``: a page is never addressed by offset, so page 10,001 costs what page 2 does). Every sort ends with
``key`` (unique per record), so pages follow one total order. The first page is a plain search through the
tenant's alias, exactly what a caller would send straight to Elasticsearch; when it is full its continuation
holds only its last sort values. The second page opens a point in time and returns it in its continuation, so
every page from the second on reads that one snapshot. Between the first and the second page, ``search_after``
on the total order keeps every record that exists on both sides exactly once (a record indexed meanwhile may
appear, as it would on a first page asked a moment later; under ``relevance`` a changed index can shift
scores). Opening the snapshot only when a second page is asked for spares the many callers who read one page a
round trip to Elasticsearch; a continuation may also name a point in time already open for it (a replayed
first-page cursor's). The last page closes the point in time. A continuation whose point in time has expired
raises ``CursorExpired``.

A cursor carries its chain of pages (a random id), the point in time and the last sort values, bound to the
tenant and the query that made them and sealed with AES-256-GCM under a key derived from a secret the workers
share: a caller can read nothing in it (no index name, node id or sort value), nor forge or edit it, nor use it
with another query or another tenant's key. Every cursor, the first page's too, expires ``LIFETIME`` seconds
after the page that gave it, as the snapshot it reads does. ``Snapshots`` bounds the points in time a key's
cursors hold open in this worker process: a chain of pages holds one (replaying a cursor reuses it), and past
``per_key`` chains the least recently used one is closed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from elasticsearch import ApiError, Elasticsearch, NotFoundError, TransportError

from crawl_assets.index.naming import read_alias
from crawl_assets.query import steps
from crawl_assets.query.filters import RecordFilter, scoped_query

Sort = Literal["relevance", "newest", "oldest"]
SORTS: tuple[str, ...] = ("relevance", "newest", "oldest")
KEEP_ALIVE_SECONDS = 120
KEEP_ALIVE = f"{KEEP_ALIVE_SECONDS}s"
TOTAL_EXACT_UP_TO = 10_000

_ORDER: dict[str, list[Any]] = {
    "relevance": ["_score", {"created_at": "desc"}, {"key": "asc"}],
    "newest": [{"created_at": {"order": "desc", "missing": "_last"}}, {"key": "asc"}],
    "oldest": [{"created_at": {"order": "asc", "missing": "_last"}}, {"key": "asc"}],
}


class CursorExpired(LookupError):
    """The point in time of a continuation is gone (kept ``KEEP_ALIVE`` after each page)."""


@dataclass(frozen=True)
class Continuation:
    pit: str | None  # None after the first page: the next page opens the snapshot
    after: list[Any]


@dataclass
class HitPage:
    records: list[dict[str, Any]]
    total: int
    total_exact: bool
    next: Continuation | None


def sort_clause(sort: str, flt: RecordFilter) -> list[Any]:
    """The sort; ``relevance`` without a text query is ``newest`` (every score would be equal)."""
    if sort not in _ORDER:
        raise ValueError(f"unknown sort {sort!r}; expected one of {', '.join(SORTS)}")
    return _ORDER["newest" if sort == "relevance" and not flt.q else sort]


def search_body(tenant: str, flt: RecordFilter, sort: str, size: int, after: list[Any] | None = None) -> dict[str, Any]:
    """The request body of one page (the bench sends the same body straight to Elasticsearch)."""
    body: dict[str, Any] = {"query": scoped_query(tenant, flt), "sort": sort_clause(sort, flt), "size": size,
                            "track_total_hits": TOTAL_EXACT_UP_TO}
    if after is not None:
        body["search_after"] = after
    return body


def search_page(client: Elasticsearch, tenant: str, flt: RecordFilter, *, sort: str = "relevance", size: int = 20,
                cont: Continuation | None = None) -> HitPage:
    return steps.run(client, page_query(tenant, flt, sort=sort, size=size, cont=cont))


def page_query(tenant: str, flt: RecordFilter, *, sort: str = "relevance", size: int = 20,
               cont: Continuation | None = None) -> steps.Query[HitPage]:
    """``search_page`` as an ``query.steps`` query (the API runs it with an asyncio client)."""
    body = search_body(tenant, flt, sort, size, cont.after if cont else None)
    pit = cont.pit if cont else None
    try:
        if cont is not None and pit is None:  # the second page: the snapshot every later page reads
            pit = (yield from steps.call("open_point_in_time", index=read_alias("records", tenant),
                                         keep_alive=KEEP_ALIVE, ignore_unavailable=True))["id"]
        if pit is None:
            resp = yield from steps.call("search", index=read_alias("records", tenant), ignore_unavailable=True, **body)
        else:
            resp = yield from steps.call("search", pit={"id": pit, "keep_alive": KEEP_ALIVE}, **body)
            pit = resp.get("pit_id", pit)
    except NotFoundError as exc:
        if pit is not None:
            raise CursorExpired("this cursor's snapshot has expired; start again from the first page") from exc
        return HitPage([], 0, True, None)  # the tenant has no index yet
    except ApiError as exc:
        if pit is not None and _is_missing_context(exc):
            raise CursorExpired("this cursor's snapshot has expired; start again from the first page") from exc
        raise
    hits = resp["hits"]["hits"]
    total = resp["hits"].get("total") or {"value": len(hits), "relation": "eq"}
    nxt = None
    if len(hits) == size and hits:
        nxt = Continuation(pit, list(hits[-1]["sort"]))
    elif pit is not None:
        try:
            yield from steps.call("close_point_in_time", id=pit)
        except (ApiError, NotFoundError):
            pass  # expired already: nothing to free
    return HitPage([h["_source"] for h in hits], int(total["value"]), total.get("relation") == "eq", nxt)


def _is_missing_context(exc: ApiError) -> bool:
    text = str(getattr(exc, "body", "") or exc)
    return "search_context_missing_exception" in text or "No search context found" in text


def close_quietly(client: Elasticsearch, pit: str) -> None:
    try:
        client.close_point_in_time(id=pit)
    except (ApiError, TransportError):
        pass  # expired already, or the node unreachable: it frees itself at its keep-alive


def close_all(client: Elasticsearch, pits: list[str]) -> None:
    for pit in pits:
        close_quietly(client, pit)


# -- cursors ---------------------------------------------------------------------------------------------------
MAX_CURSOR = 8192
LIFETIME = KEEP_ALIVE_SECONDS
SNAPSHOTS_PER_KEY = 8
_NONCE = 12
_CONTEXT = b"crawl_assets cursor v2"
_AGAIN = "pass the `next` value of the previous page unchanged"


class BadCursor(ValueError):
    pass


class ExpiredCursor(BadCursor):
    pass


def query_fingerprint(tenant: str, flt: RecordFilter, sort: str, size: int) -> str:
    blob = orjson.dumps({"t": tenant, "f": flt.describe(), "s": sort, "n": size}, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()[:32]


def new_chain() -> str:
    """The id of a new chain of pages (a first page)."""
    return secrets.token_hex(8)


def _aead(secret_bytes: bytes) -> AESGCM:
    return AESGCM(hmac.new(secret_bytes, _CONTEXT, hashlib.sha256).digest())


def encode(secret_bytes: bytes, fingerprint: str, chain: str, cont: Continuation, now: float) -> str:
    payload = orjson.dumps({"q": fingerprint, "c": chain, "p": cont.pit, "a": cont.after, "e": int(now + LIFETIME)})
    nonce = os.urandom(_NONCE)
    sealed = nonce + _aead(secret_bytes).encrypt(nonce, payload, _CONTEXT)
    return base64.urlsafe_b64encode(sealed).rstrip(b"=").decode()


def decode(secret_bytes: bytes, fingerprint: str, cursor: str, now: float) -> tuple[str, Continuation]:
    """(the cursor's chain, where its next page starts); ``BadCursor`` for anything not made by ``encode`` for
    this query, ``ExpiredCursor`` past its lifetime."""
    if len(cursor) > MAX_CURSOR:
        raise BadCursor(f"malformed cursor: {_AGAIN}")
    try:
        sealed = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data: Any = orjson.loads(_aead(secret_bytes).decrypt(sealed[:_NONCE], sealed[_NONCE:], _CONTEXT))
    except (ValueError, binascii.Error, InvalidTag):  # orjson.JSONDecodeError is a ValueError
        raise BadCursor(f"invalid cursor: {_AGAIN}") from None
    if data.get("q") != fingerprint:
        raise BadCursor("this cursor belongs to another query: repeat the same parameters (q, filters, sort, size) "
                        "with it")
    if now > data["e"]:
        raise ExpiredCursor(f"this cursor has expired (a cursor is valid {LIFETIME // 60} minutes after the page that "
                            "gave it): start again from the first page")
    pit = data.get("p")
    return str(data["c"]), Continuation(None if pit is None else str(pit), list(data["a"]))


@dataclass
class Snapshots:
    """The points in time each key's chains of pages hold open in this process: (pit, expiry) by chain, least
    recently used first."""

    per_key: int = SNAPSHOTS_PER_KEY
    _held: dict[str, OrderedDict[str, tuple[str, float]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def held(self, key_id: str, chain: str, now: float) -> str | None:
        """The point in time ``chain`` reads, while it lives (a replayed first-page cursor reuses it)."""
        with self._lock:
            got = self._held.get(key_id, {}).get(chain)
        return got[0] if got is not None and got[1] > now else None

    def hold(self, key_id: str, chain: str, pit: str, now: float, *, opened: bool) -> list[str]:
        """``chain`` reads ``pit`` for ``LIFETIME`` more seconds. Returns the points in time to close: the one
        ``chain`` held before when this request ``opened`` another (concurrent replays of a first page), and
        the least recently used chains' past ``per_key``."""
        with self._lock:
            chains = self._held.setdefault(key_id, OrderedDict())
            for gone in [c for c, (_, until) in chains.items() if until <= now]:
                del chains[gone]  # expired on the node already
            before = chains.pop(chain, None)
            closing = [before[0]] if opened and before is not None and before[0] != pit else []
            chains[chain] = (pit, now + LIFETIME)
            while len(chains) > self.per_key:
                closing.append(chains.popitem(last=False)[1][0])
            return closing

    def release(self, key_id: str, chain: str) -> None:
        """``chain`` is done (its last page closed its point in time) or gone."""
        with self._lock:
            chains = self._held.get(key_id)
            if chains is not None:
                chains.pop(chain, None)
                if not chains:
                    del self._held[key_id]


@dataclass
class Paging:
    """One search request's place in its chain of pages: where it starts (``cont``, None for a first page), the
    next page's cursor, and the points in time to close once it is answered (``to_close``)."""

    secret: bytes
    snapshots: Snapshots
    key_id: str
    fingerprint: str
    now: float
    chain: str = field(default_factory=new_chain)
    cont: Continuation | None = None
    to_close: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, secret_bytes: bytes, snapshots: Snapshots, key_id: str, fingerprint: str, cursor: str | None,
              now: float) -> Paging:
        paging = cls(secret_bytes, snapshots, key_id, fingerprint, now)
        if cursor:
            paging.chain, cont = decode(secret_bytes, fingerprint, cursor, now)
            if cont.pit is None:  # a first page's cursor: its chain may hold a snapshot already (a replay)
                cont = Continuation(snapshots.held(key_id, paging.chain, now), cont.after)
            paging.cont = cont
        return paging

    def next_cursor(self, nxt: Continuation | None) -> str | None:
        """The cursor of the page after this one (None at the end, when the last page closed the snapshot)."""
        if nxt is None:
            if self.cont is not None:
                self.snapshots.release(self.key_id, self.chain)
            return None
        if nxt.pit is not None:
            opened = self.cont is not None and self.cont.pit is None
            self.to_close += self.snapshots.hold(self.key_id, self.chain, nxt.pit, self.now, opened=opened)
        return encode(self.secret, self.fingerprint, self.chain, nxt, self.now)

    def gone(self) -> None:
        """The chain's snapshot expired on the node."""
        self.snapshots.release(self.key_id, self.chain)
