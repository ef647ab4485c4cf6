"""Places, co-sharing groups and the co-sharing network: the enrichment's features (inferred, labelled as such)."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import partial
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from crawl_assets.api.edge import CallerDep, ERROR_RESPONSES, answer
from crawl_assets.api.access import ApiState
from crawl_assets.api.models import Record
from crawl_assets.api.routes_streams import _BUSY, HeldStream, _slot
from crawl_assets.enrich import search_signals
from crawl_assets.enrich.coordination import CAUTION
from crawl_assets.query import graph_formats

router = APIRouter(prefix="/v1", tags=["enrichment"], responses=ERROR_RESPONSES)
PLACE_ID = r"(country:[A-Z]{2}|region:[A-Z]{2}-[A-Z0-9]{1,3}|city:[0-9]{1,10})"
INFERRED = "enrichment (model-made, not observed): places named in text, never coordinates"


class PlaceCount(BaseModel):
    place_id: str
    kind: str
    name: str
    country: str
    names: dict[str, str] = Field(description="The place's names by language (fa, ar, en where known)")
    lat: float | None = Field(description="The place's own point (a city's, a region's seat, a capital)")
    lon: float | None
    records: int


class Places(BaseModel):
    source: str
    places: list[PlaceCount]


class PlaceRecords(BaseModel):
    place_id: str
    records: list[Record]


class CoordinationGroups(BaseModel):
    caution: str
    groups: list[dict[str, Any]]


@router.get("/places", response_model=Places, summary="Records per place named in them (inferred)")
async def places(request: Request, who: CallerDep,
                 kind: Annotated[Literal["country", "region", "city"] | None, Query()] = None,
                 country: Annotated[str | None, Query(pattern="^[A-Za-z]{2}$", description="ISO 3166-1 alpha-2")] = None,
                 size: Annotated[int, Query(ge=1, le=search_signals.MAX_PLACES)] = 50) -> Response:
    return await answer(_places, request.app.state.api, who.tenant, kind, country, size)


def _places(state: ApiState, tenant: str, kind: str | None, country: str | None, size: int) -> Places:
    counts = search_signals.place_counts(state.es, tenant, kind=kind, country=country, size=size)
    return Places(source=INFERRED, places=[PlaceCount(**c) for c in counts])


@router.get("/places.geojson", summary="Records per place as GeoJSON points (inferred)",
            responses={200: {"content": {"application/geo+json": {"schema": {"type": "object"}}}}},
            response_class=Response)
async def places_geojson(request: Request, who: CallerDep,
                         kind: Annotated[Literal["country", "region", "city"] | None, Query()] = None,
                         country: Annotated[str | None, Query(pattern="^[A-Za-z]{2}$")] = None,
                         size: Annotated[int, Query(ge=1, le=search_signals.MAX_PLACES)] = 200) -> Response:
    import orjson

    state = request.app.state.api
    counts = await run_in_threadpool(search_signals.place_counts, state.es, who.tenant, kind=kind, country=country,
                                     size=size)
    return Response(orjson.dumps(search_signals.geojson(counts)), media_type="application/geo+json")


@router.get("/places/{place_id}/records", response_model=PlaceRecords, summary="Records naming one place")
async def place_records(request: Request, who: CallerDep,
                        place_id: Annotated[str, Path(pattern=f"^{PLACE_ID}$", max_length=40)],
                        size: Annotated[int, Query(ge=1, le=1000)] = 100) -> Response:
    return await answer(_place_records, request.app.state.api, who.tenant, place_id, size)


def _place_records(state: ApiState, tenant: str, place_id: str, size: int) -> PlaceRecords:
    return PlaceRecords(place_id=place_id, records=search_signals.place_records(state.es, tenant, place_id, size))


@router.get("/coordination/groups", response_model=CoordinationGroups,
            summary="Co-sharing groups: accounts sharing the same items within a short window, repeatedly")
async def coordination_groups(request: Request, who: CallerDep,
                              min_accounts: Annotated[int, Query(ge=2, le=100_000)] = 2,
                              size: Annotated[int, Query(ge=1, le=1000)] = 20) -> Response:
    return await answer(_groups, request.app.state.api, who.tenant, min_accounts, size)


def _groups(state: ApiState, tenant: str, min_accounts: int, size: int) -> CoordinationGroups:
    groups = search_signals.coordination_groups(state.es, tenant, min_accounts=min_accounts, size=size)
    return CoordinationGroups(caution=CAUTION, groups=groups)


@router.get("/coordination/network", summary="The co-sharing network as GEXF, GraphML or CSV (with its caution)",
            responses={**_BUSY, 200: {"content": {t: {"schema": {"type": "string"}}
                                                  for t in graph_formats.FORMATS.values()}}},
            response_class=Response)
async def coordination_network(request: Request, who: CallerDep,
                               group: Annotated[str | None, Query(pattern="^cg-[0-9a-f]{16}$")] = None,
                               format: Annotated[Literal["gexf", "graphml", "csv"], Query()] = "gexf") -> Response:
    streams = request.app.state.api.streams
    _slot(request, who.key_id)
    try:
        graph = await run_in_threadpool(search_signals.co_sharing_graph, request.app.state.api.es, who.tenant, group)
    except BaseException:
        streams.release(who.key_id)
        raise
    query = {"network": "co_sharing", "tenant": who.tenant, "group": group,
             "generated_at": datetime.now(timezone.utc).isoformat()}
    name = f"{who.tenant}-co-sharing.{graph_formats.EXTENSIONS[format]}"
    return HeldStream(graph_formats.WRITERS[format](graph, query), partial(streams.release, who.key_id),
                      media_type=graph_formats.FORMATS[format],
                      headers={"Content-Disposition": f'attachment; filename="{name}"'})

