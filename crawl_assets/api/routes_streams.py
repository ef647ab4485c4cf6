"""Streamed files: networks (GEXF, GraphML, edge-list CSV) and record exports (JSON lines, CSV, Parquet).

The work that can fail (the scan's bounds, the snapshot, the count) happens before the first byte, so a
bad request or an unreachable index is an error answer; once streaming, a failure cuts the transfer short
(an incomplete chunked response the client sees as an error), never a file that looks complete.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from functools import partial
from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from crawl_assets.api.edge import (ApiProblem, CallerDep, ERROR_RESPONSES, ErrorBody, bad_request, record_filter, zone
                                   as _zone)
from crawl_assets.query import exports, graph_formats, networks
from crawl_assets.query.filters import RecordFilter

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


def _logged(chunks: Iterator[bytes]) -> Iterator[bytes]:
    try:
        yield from chunks
    except Exception:
        log.exception("a streamed file was cut short")
        raise


class HeldStream(StreamingResponse):
    """A streamed file holding one of its key's slots until the response ends, however it ends: sent, failed, or
    its client gone before the first byte (then the body generator never starts, so no ``finally`` of its
    would run). The body is closed (a started export closes its snapshot there), then ``closers`` run, the
    slot is released last."""

    def __init__(self, chunks: Iterator[bytes], release: Callable[[], None], closers: tuple[Callable[[], None], ...] = (),
                 **options: Any) -> None:
        self._body = _logged(chunks)
        self._finishers = (self._body.close, getattr(chunks, "close", _nothing), *closers)
        self._release = release
        super().__init__(self._body, **options)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):  # runs even when the request's task is being cancelled
                await run_in_threadpool(self._finish)

    def _finish(self) -> None:
        try:
            for finish in self._finishers:
                try:
                    finish()
                except Exception:  # noqa: BLE001 - the slot is released whatever a finisher does
                    log.exception("closing a streamed file failed")
        finally:
            self._release()


def _nothing() -> None:
    pass


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
    streams = request.app.state.api.streams
    _slot(request, who.key_id)
    try:
        graph = await run_in_threadpool(networks.build_graph, request.app.state.api.es, who.tenant, flt, network)
        query = {"network": network, "tenant": who.tenant, "filter": flt.describe(),
                 "generated_at": datetime.now(timezone.utc).isoformat()}
        body = graph_formats.WRITERS[format](graph, query)
        name = f"{who.tenant}-{network}-network.{graph_formats.EXTENSIONS[format]}"
        return HeldStream(body, partial(streams.release, who.key_id), media_type=graph_formats.FORMATS[format],
                          headers={"Content-Disposition": f'attachment; filename="{name}"',
                                   "X-Crawl-Query": _header_value(query)})
    except BaseException as exc:
        streams.release(who.key_id)
        if isinstance(exc, networks.GraphTooLarge):
            raise ApiProblem(413, "too_large", str(exc)) from None
        raise


@router.get("/exports/records", summary="The filtered records as JSON lines, CSV, Parquet or XLSX (with the query recorded)",
            responses={**_BUSY, 200: {"description": "The records", "content": {
                t: {"schema": {"type": "string"}} for t in exports.FORMATS.values()}}},
            response_class=StreamingResponse)
async def export(request: Request, who: CallerDep, flt: FilterDep,
                 format: Annotated[Literal["jsonl", "csv", "parquet", "xlsx"], Query()] = "jsonl",
                 fields: Annotated[list[str] | None, Query(max_length=len(exports.FIELDS), description=(
                     "Fields to include (repeat); default: " + ", ".join(exports.DEFAULT_FIELDS)))] = None,
                 limit: Annotated[int, Query(ge=1, le=exports.MAX_EXPORT)] = exports.MAX_EXPORT,
                 order: Annotated[Literal["oldest", "index"], Query(
                     description="oldest: by created_at then key (reproducible); index: storage order (fastest)")] = "oldest",
                 bom: Annotated[bool, Query(description="CSV: start with a UTF-8 byte order mark (Excel then reads "
                                                        "Persian and Arabic right)")] = True,
                 calendar: Annotated[Literal["gregorian", "jalali"], Query(
                     description="jalali: each time field followed by <field>_jalali in tz")] = "gregorian",
                 tz: Annotated[str, Query(max_length=64, description="IANA time zone of the Jalali dates")] = "Asia/Tehran",
                 ) -> StreamingResponse:
    chosen = tuple(dict.fromkeys(fields)) if fields else exports.DEFAULT_FIELDS
    bad = [f for f in chosen if f not in exports.FIELDS]
    if bad:
        raise bad_request(f"fields: unknown {', '.join(repr(f[:40]) for f in bad[:5])}; choose from {', '.join(exports.FIELDS)}")
    streams = request.app.state.api.streams
    _slot(request, who.key_id)
    plan = None
    try:
        plan = await run_in_threadpool(partial(exports.ExportPlan, request.app.state.api.es, who.tenant, flt, chosen,
                                               format, limit, order, bom=bom, calendar=calendar, time_zone=_zone(tz)))
        name = f"{who.tenant}-records.{exports.EXTENSIONS[format]}"
        from crawl_assets.query import export_formats  # pyarrow: loaded by the first export, not at start

        return HeldStream(export_formats.encode(plan), partial(streams.release, who.key_id), (plan.close,),
                          media_type=exports.FORMATS[format],
                          headers={"Content-Disposition": f'attachment; filename="{name}"',
                                   "X-Crawl-Query": _header_value(plan.header)})
    except BaseException:
        if plan is not None:
            await run_in_threadpool(plan.close)
        streams.release(who.key_id)
        raise
