"""Paged record search: a filter, a sort, a page size, and deep pagination with ``search_after`` over a
point in time (no ``from``: a page is never addressed by offset, so page 10,001 costs what page 2 does).

Every sort ends with ``key`` (unique per record), so pages follow one total order. The first page is a
plain search through the tenant's alias, exactly what a caller would send straight to Elasticsearch; when
it is full its continuation holds only its last sort values. The second page opens a point in time and
returns it in its continuation, so every page from the second on reads that one snapshot. Between the
first and the second page, ``search_after`` on the total order keeps every record that exists on both
sides exactly once (a record indexed meanwhile may appear, as it would on a first page asked a moment
later; under ``relevance`` a changed index can shift scores). Opening the snapshot only when a second page
is asked for spares the many callers who read one page a round trip to Elasticsearch; a continuation may also name a point in time already open for it (the API reuses the one a
replayed first-page cursor opened). The last page closes the point in time. A continuation whose point in
time has expired raises ``CursorExpired``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from elasticsearch import ApiError, Elasticsearch, NotFoundError, TransportError

from crawl_assets.query import steps
from crawl_assets.query.filters import RecordFilter, scoped_query
from crawl_assets.index.naming import read_alias

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
