"""How the API answers: a page of records or an analysis as JSON, and every failure as one error shape.

No worker-thread hop for the endpoints that only query (``answer_query``): their ``query.steps`` query runs
on the event loop with the asyncio client, and the answer is built there (a few hundred microseconds of
pydantic for a page of records). Under load, each hop between threads and processes waits for a CPU on a
busy machine; awaiting Elasticsearch on the loop leaves one wake-up per request and answer.

The others: one worker-thread hop per request: an endpoint is ``async`` and hands its blocking work (the Elasticsearch
calls and building its pydantic answer) to ``answer``, which runs it in the thread pool and serializes the
model to JSON there, with pydantic's serializer.

Why (profiled under load, docs/API.md): a plain ``def`` endpoint with plain ``def``
dependencies cost four thread-pool hops per request (each dependency, the endpoint, then FastAPI's
re-validation of the returned model); on a busy machine each hop waits to be scheduled, and half of the
server's samples sat in that hand-over. The model is validated once, when the endpoint builds it; FastAPI
returns a ``Response`` as is, so it is not validated and encoded a second time. The routes keep
``response_model`` for the OpenAPI schema.

Error answers: one JSON shape ``{"error": code, "message": text}`` for every failure, never a stack trace.

* bad parameters: 400 with the parameter and the problem (FastAPI's validation errors are rewritten);
* the index unreachable, overloaded or timing out: 503 with ``Retry-After``;
* a query the index refuses (too many clauses, ...): 400 with Elasticsearch's reason type;
* anything unexpected: 500 with an incident id; the traceback goes to the server log only.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from typing import Any

from elasticsearch import ApiError, ConnectionError as EsConnectionError, TransportError
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from crawl_assets.query import steps


def as_json(model: BaseModel) -> Response:
    """``model`` as FastAPI would answer it for ``response_model=type(model)`` (field aliases used)."""
    return Response(type(model).__pydantic_serializer__.to_json(model, by_alias=True), media_type="application/json")


def _built(work: Callable[..., BaseModel], args: tuple[Any, ...]) -> Response:
    return as_json(work(*args))


async def answer(work: Callable[..., BaseModel], *args: Any) -> Response:
    """``work(*args)`` run in the thread pool; its model answered as JSON."""
    return await run_in_threadpool(_built, work, args)


async def answer_query(state: Any, query: steps.Query[Any], build: Callable[[Any], BaseModel]) -> Response:
    """``build(result of query)`` as JSON: the query awaited on the event loop with the state's asyncio client,
    or run with the blocking client in the thread pool when the app has none."""
    client = state.async_es()
    if client is None:
        return await run_in_threadpool(lambda: as_json(build(steps.run(state.es, query))))
    return as_json(build(await steps.run_async(client, query)))


log = logging.getLogger("crawl_assets.api")
RETRY_AFTER_SECONDS = 10


class ErrorBody(BaseModel):
    error: str
    message: str


class ApiProblem(Exception):
    def __init__(self, status: int, error: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.error, self.message, self.headers = status, error, message, headers or {}


def bad_request(message: str) -> ApiProblem:
    return ApiProblem(400, "bad_request", message)


def not_found(message: str) -> ApiProblem:
    return ApiProblem(404, "not_found", message)


def _answer(status: int, error: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": error, "message": message}, status_code=status, headers=headers)


def unavailable() -> JSONResponse:
    return _answer(503, "index_unavailable", f"the search index is unreachable or overloaded; retry in "
                   f"{RETRY_AFTER_SECONDS} seconds", {"Retry-After": str(RETRY_AFTER_SECONDS)})


def _location(loc: Any) -> str:
    parts = [str(p) for p in loc if p not in ("query", "path", "header")]
    return ".".join(parts) or "request"


def describe_validation(exc: RequestValidationError) -> str:
    problems = []
    for err in exc.errors()[:10]:
        problems.append(f"{_location(err.get('loc', ()))}: {err.get('msg', 'invalid')}")
    return "; ".join(problems)


def es_failure(exc: Exception) -> JSONResponse:
    """The answer for an Elasticsearch failure: 400 when it refused this query, else 503."""
    if isinstance(exc, ApiError):
        status = exc.meta.status if exc.meta is not None else 500
        if status == 400:
            info = exc.info if isinstance(exc.info, dict) else {}
            cause = ((info.get("error") or {}).get("root_cause") or [{}])[0] if isinstance(info.get("error"), dict) else {}
            kind = cause.get("type") or "invalid query"
            return _answer(400, "query_refused", f"the index refused this query ({kind}); simplify it "
                           "(fewer words or values)")
        log.warning("elasticsearch answered %s: %s", status, type(exc).__name__)
    else:
        log.warning("elasticsearch unreachable: %s", type(exc).__name__)
    return unavailable()


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiProblem)
    async def problem(_: Request, exc: ApiProblem) -> JSONResponse:
        return _answer(exc.status, exc.error, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _answer(400, "bad_request", describe_validation(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return _answer(exc.status_code, code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(ApiError)
    async def es_api(_: Request, exc: ApiError) -> JSONResponse:
        return es_failure(exc)

    @app.exception_handler(EsConnectionError)
    async def es_down(_: Request, exc: Exception) -> JSONResponse:
        return es_failure(exc)

    @app.exception_handler(TransportError)
    async def es_transport(_: Request, exc: Exception) -> JSONResponse:
        return es_failure(exc)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        incident = secrets.token_hex(4)
        log.error("unexpected error %s on %s %s", incident, request.method, request.url.path, exc_info=exc)
        return _answer(500, "internal_error", f"unexpected error (incident {incident}); the server log has the details")


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "A parameter is invalid (the message names it)"},
    401: {"model": ErrorBody, "description": "Missing, unknown or revoked API key"},
    429: {"model": ErrorBody, "description": "Rate limit of this key, or failed logins from this address, exceeded "
                                             "(see Retry-After)"},
    500: {"model": ErrorBody, "description": "Unexpected error (an incident id, never a stack trace)"},
    503: {"model": ErrorBody, "description": "The search index is unreachable or overloaded (see Retry-After)"},
}
