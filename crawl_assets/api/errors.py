"""Error answers: one JSON shape ``{"error": code, "message": text}`` for every failure, never a stack trace.

* bad parameters: 400 with the parameter and the problem (FastAPI's validation errors are rewritten);
* the index unreachable, overloaded or timing out: 503 with ``Retry-After``;
* a query the index refuses (too many clauses, ...): 400 with Elasticsearch's reason type;
* anything unexpected: 500 with an incident id; the traceback goes to the server log only.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from elasticsearch import ApiError, ConnectionError as EsConnectionError, TransportError
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

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
