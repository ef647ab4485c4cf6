"""The query and analysis API (FastAPI): every endpoint reads one tenant's records, the tenant named by the
caller's API key. ``create_app`` takes its collaborators (an Elasticsearch client, a key store), so tests
and the CLI build it the same way; ``crawl-assets api serve`` runs it on uvicorn. docs/API.md walks through it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from elasticsearch import AsyncElasticsearch, Elasticsearch
from fastapi import FastAPI

from crawl_assets.api import (answers, pages, routes_analysis, routes_features, routes_records, routes_releases,
                              routes_signals, routes_streams)
from crawl_assets.api.keys import KeyStore
from crawl_assets.api.models import Health
from crawl_assets.api.state import FAILED_LOGINS_PER_MINUTE, ApiState, RateLimiter, StreamSlots
from crawl_assets.lake import Lake

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
    answers.install(app)

    @app.get("/healthz", response_model=Health, tags=["service"], summary="The API process is up (no key needed)")
    async def healthz() -> Health:
        return Health(status="ok")

    for module in (routes_records, routes_analysis, routes_streams, routes_features, routes_signals,
                   routes_releases):
        app.include_router(module.router)
    return app
