"""Streamed files: networks (GEXF, GraphML, edge-list CSV) and record exports (JSON lines, CSV, Parquet).

The work that can fail (the scan's bounds, the snapshot, the count) happens before the first byte, so a
bad request or an unreachable index is an error answer; once streaming, a failure cuts the transfer short
(an incomplete chunked response the client sees as an error), never a file that looks complete.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from crawl_assets.api.auth import CallerDep
from crawl_assets.api.errors import ERROR_RESPONSES, ApiProblem, ErrorBody, bad_request
from crawl_assets.api.params import record_filter
from crawl_assets.index import exports, graph_formats, networks
from crawl_assets.index.filters import RecordFilter

log = logging.getLogger("crawl_assets.api")
MAX_HEADER = 4096
router = APIRouter(prefix="/v1", tags=["files"], responses=ERROR_RESPONSES)
FilterDep = Annotated[RecordFilter, Depends(record_filter)]
_BUSY = {429: {"model": ErrorBody, "description": "Rate limit, or too many streams of this key at once"},
         413: {"model": ErrorBody, "description": "The filtered set is beyond the bounds: narrow it"}}


def _slot(request: Request, key_id: str) -> None:
    if not request.app.state.api.streams.acquire(key_id):
        raise ApiProblem(429, "too_many_streams", f"at most {request.app.state.api.streams.per_key} streamed files per "
                         "key at a time; wait for one to finish", {"Retry-After": "5"})


def _released(request: Request, key_id: str, chunks: Iterator[bytes]) -> Iterator[bytes]:
    try:
        yield from chunks
    except Exception:
        log.exception("a streamed file was cut short")
        raise
    finally:
        request.app.state.api.streams.release(key_id)


def _header_value(query: dict) -> str:
    """The query as ASCII JSON for the ``X-Crawl-Query`` header (its SHA-256 when it is too long for one)."""
    text = json.dumps(query, ensure_ascii=True, sort_keys=True)
    if len(text) <= MAX_HEADER:
        return text
    return json.dumps({"sha256": hashlib.sha256(text.encode()).hexdigest(), "note": "query too long for a header; "
                       "it is in the file"})


@router.get("/networks/{network}", summary="A network of the filtered records, for Gephi and graph tools",
            responses={**_BUSY, 200: {"description": "The graph", "content": {
                t: {"schema": {"type": "string"}} for t in graph_formats.FORMATS.values()}}},
            response_class=StreamingResponse)
async def network(request: Request, who: CallerDep, flt: FilterDep,
                  network: Annotated[Literal["reply", "mention", "repost", "quote", "hashtag"], Path(
                      description="reply, mention, repost (forwards too), quote: author to author; hashtag: co-occurrence")],
                  format: Annotated[Literal["gexf", "graphml", "csv"], Query()] = "gexf") -> StreamingResponse:
    _slot(request, who.key_id)
    try:
        graph = await run_in_threadpool(networks.build_graph, request.app.state.api.es, who.tenant, flt, network)
    except networks.GraphTooLarge as exc:
        request.app.state.api.streams.release(who.key_id)
        raise ApiProblem(413, "too_large", str(exc)) from None
    except BaseException:
        request.app.state.api.streams.release(who.key_id)
        raise
    query = {"network": network, "tenant": who.tenant, "filter": flt.describe(),
             "generated_at": datetime.now(timezone.utc).isoformat()}
    body = graph_formats.WRITERS[format](graph, query)
    name = f"{who.tenant}-{network}-network.{graph_formats.EXTENSIONS[format]}"
    return StreamingResponse(_released(request, who.key_id, body), media_type=graph_formats.FORMATS[format],
                             headers={"Content-Disposition": f'attachment; filename="{name}"',
                                      "X-Crawl-Query": _header_value(query)})


@router.get("/exports/records", summary="The filtered records as JSON lines, CSV or Parquet (with the query recorded)",
            responses={**_BUSY, 200: {"description": "The records", "content": {
                t: {"schema": {"type": "string"}} for t in exports.FORMATS.values()}}},
            response_class=StreamingResponse)
async def export(request: Request, who: CallerDep, flt: FilterDep,
                 format: Annotated[Literal["jsonl", "csv", "parquet"], Query()] = "jsonl",
                 fields: Annotated[list[str] | None, Query(max_length=len(exports.FIELDS), description=(
                     "Fields to include (repeat); default: " + ", ".join(exports.DEFAULT_FIELDS)))] = None,
                 limit: Annotated[int, Query(ge=1, le=exports.MAX_EXPORT)] = exports.MAX_EXPORT,
                 order: Annotated[Literal["oldest", "index"], Query(
                     description="oldest: by created_at then key (reproducible); index: storage order (fastest)")] = "oldest",
                 ) -> StreamingResponse:
    chosen = tuple(dict.fromkeys(fields)) if fields else exports.DEFAULT_FIELDS
    bad = [f for f in chosen if f not in exports.FIELDS]
    if bad:
        raise bad_request(f"fields: unknown {', '.join(repr(f[:40]) for f in bad[:5])}; choose from {', '.join(exports.FIELDS)}")
    _slot(request, who.key_id)
    try:
        plan = await run_in_threadpool(exports.ExportPlan, request.app.state.api.es, who.tenant, flt, chosen, format,
                                       limit, order)
    except BaseException:
        request.app.state.api.streams.release(who.key_id)
        raise
    name = f"{who.tenant}-records.{exports.EXTENSIONS[format]}"
    return StreamingResponse(_released(request, who.key_id, plan.stream()), media_type=exports.FORMATS[format],
                             headers={"Content-Disposition": f'attachment; filename="{name}"',
                                      "X-Crawl-Query": _header_value(plan.header)})
