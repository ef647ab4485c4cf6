"""The query and analysis API (FastAPI): every endpoint reads one tenant's records, the tenant named by the
caller's API key. ``create_app`` takes its collaborators (an Elasticsearch client, a key store), so tests
and the CLI build it the same way; ``crawl-assets api serve`` runs it on uvicorn. docs/API.md walks through it.

Here too: the record routes (search, one record, one thread); the other routers are the ``routes_*`` modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from elasticsearch import AsyncElasticsearch, Elasticsearch
from fastapi import APIRouter, Depends, FastAPI, Path, Query, Request
from fastapi.responses import Response
from starlette.background import BackgroundTask

from crawl_assets.api import (edge, pages, routes_analysis, routes_features, routes_releases, routes_signals,
                              routes_streams)
from crawl_assets.api.access import FAILED_LOGINS_PER_MINUTE, ApiState, KeyStore, RateLimiter, StreamSlots
from crawl_assets.api.edge import (ERROR_RESPONSES, ApiProblem, CallerDep, ErrorBody, answer, answer_query,
                                   bad_request, not_found, record_filter)
from crawl_assets.api.models import Health, RecordDetail, SearchPage, Thread
from crawl_assets.lake import Lake
from crawl_assets.query.conversations import MAX_THREAD, record_query, thread
from crawl_assets.query.filters import RecordFilter

MAX_PAGE = 500
KEY_PATTERN = r"^[a-z]+:[^\s/]{1,500}$"
router = APIRouter(prefix="/v1", tags=["records"], responses=ERROR_RESPONSES)
FilterDep = Annotated[RecordFilter, Depends(record_filter)]
KeyPath = Annotated[str, Path(description="A record key such as x:1790000000000000001 or telegram:100:42",
                              pattern=KEY_PATTERN, max_length=512)]


@router.get("/search", response_model=SearchPage, summary="Search records (Persian-aware), filtered, paged",
            responses={410: {"model": ErrorBody, "description": "The cursor expired (or its snapshot was closed)"}})
async def search(request: Request, who: CallerDep, flt: FilterDep,
                 sort: Annotated[Literal["relevance", "newest", "oldest"], Query(
                     description="relevance (needs q; else newest), newest or oldest; ties by key")] = "relevance",
                 size: Annotated[int, Query(ge=1, le=MAX_PAGE, description=f"Records per page (1-{MAX_PAGE})")] = 20,
                 cursor: Annotated[str | None, Query(max_length=pages.MAX_CURSOR,
                                                     description="`next` of the previous page")] = None) -> Response:
    state: ApiState = request.app.state.api
    fingerprint = pages.query_fingerprint(who.tenant, flt, sort, size)
    try:
        paging = pages.Paging.start(state.cursor_secret, state.snapshots, who.key_id, fingerprint, cursor,
                                      state.clock())
    except pages.ExpiredCursor as exc:
        raise ApiProblem(410, "cursor_expired", str(exc)) from None
    except pages.BadCursor as exc:
        raise bad_request(str(exc)) from None

    def build(page: pages.HitPage) -> SearchPage:
        return SearchPage(records=page.records, total=page.total, total_exact=page.total_exact,
                          next=paging.next_cursor(page.next))

    try:
        response = await answer_query(state, pages.page_query(who.tenant, flt, sort=sort, size=size, cont=paging.cont), build)
    except pages.CursorExpired as exc:
        paging.gone()
        raise ApiProblem(410, "cursor_expired", str(exc)) from None
    if paging.to_close:  # after the answer is sent
        response.background = BackgroundTask(pages.close_all, state.es, paging.to_close)
    return response


@router.get("/records/{key}", response_model=RecordDetail, summary="One record with its edit history and tombstone state",
            responses={404: {"model": ErrorBody, "description": "No record of that key for this tenant"}})
async def record(request: Request, who: CallerDep, key: KeyPath) -> Response:
    def build(found: dict | None) -> RecordDetail:
        if found is None:
            raise not_found(f"no record {key!r}")
        return RecordDetail.model_validate(found)

    return await answer_query(request.app.state.api, record_query(who.tenant, key), build)


@router.get("/threads/{key}", response_model=Thread, summary="The conversation of a record, in order",
            responses={404: {"model": ErrorBody, "description": "No record of that key for this tenant"}})
async def conversation(request: Request, who: CallerDep, key: KeyPath,
                       limit: Annotated[int, Query(ge=1, le=MAX_THREAD,
                                                   description="Most records of the conversation")] = MAX_THREAD,
                       ) -> Response:
    return await answer(_thread, request.app.state.api, who.tenant, key, limit)


def _thread(state: ApiState, tenant: str, key: str, limit: int) -> Thread:
    found = thread(state.es, tenant, key, limit=limit)
    if found is None:
        raise not_found(f"no record {key!r}")
    return Thread.model_validate(found)


# -- the app -------------------------------------------------------------------------------------------------
DESCRIPTION = """Search, aggregate and export one tenant's collected records (crawl_assets).

Authenticate with `Authorization: Bearer <key>` (keys: `crawl-assets api keys create --tenant T --name N`).
Every answer concerns only the key's tenant. Errors are `{"error", "message"}` with a 4xx for a bad request,
429 with `Retry-After` past the key's rate limit or after too many failed logins from the client's address,
503 with `Retry-After` when the index is unreachable.
Networks show observed interactions and co-occurrences: proximity is not evidence of coordination.
"""


def create_app(es: Elasticsearch, keys: KeyStore, *, rate_per_minute: int = 600, streams_per_key: int = 2,
               snapshots_per_key: int = pages.SNAPSHOTS_PER_KEY, failed_logins_per_minute: int = FAILED_LOGINS_PER_MINUTE,
               async_client: Callable[[], AsyncElasticsearch] | None = None, lake: Lake | None = None,
               release_max_records: int = 100_000, release_tmp: str | None = None, **extra: Any) -> FastAPI:
    app = FastAPI(title="crawl_assets API", version="1", description=DESCRIPTION, docs_url="/docs",
                  redoc_url=None, **extra)
    app.state.api = ApiState(es, keys, RateLimiter(rate_per_minute), StreamSlots(streams_per_key),
                             failed_logins=RateLimiter(failed_logins_per_minute),
                             snapshots=pages.Snapshots(snapshots_per_key), async_client=async_client, lake=lake,
                             release_max_records=release_max_records, release_tmp=release_tmp)
    edge.install(app)

    @app.get("/healthz", response_model=Health, tags=["service"], summary="The API process is up (no key needed)")
    async def healthz() -> Health:
        return Health(status="ok")

    for routes in (router, routes_analysis.router, routes_streams.router, routes_features.router,
                   routes_signals.router, routes_releases.router):
        app.include_router(routes)
    return app
