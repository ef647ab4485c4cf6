"""The API's HTTP edge: what every request brings before its route runs, and how every answer leaves.

Who is calling: the API key in ``Authorization: Bearer <key>`` (or ``X-API-Key``) names one tenant, and
that tenant is the only one every query of the request reads. Keys in the URL are refused (URLs end up
in access logs and browser histories). The rate limit is taken here, per key; failed logins are limited per
client address (uvicorn takes it from ``X-Forwarded-For`` when the proxy in front is trusted).

The query parameters every read shares (the filter), validated with clear messages. Lists are repeated
parameters (``?platform=x&platform=telegram``); each holds at most ``MAX_VALUES`` values of at most
``MAX_VALUE`` characters. Instants are an RFC 3339 date-time with ``Z`` or an offset (``2026-01-31T10:00:00Z``),
or a date (``2026-01-31``: midnight UTC); no epoch numbers, no local times without an offset.

The answers: endpoints that only query (``answer_query``) run their ``query.steps`` query on the event loop with
the asyncio client and build the answer there; the others hand their blocking work to ``answer``, one
worker-thread hop that also serializes the model to JSON with pydantic's serializer. Under load each hop between
threads waits for a CPU (profiled, docs/API.md): a plain ``def`` endpoint with ``def`` dependencies cost four
hops. The model is validated once, when the endpoint builds it; a ``Response`` is returned as is, and the
routes keep ``response_model`` for the OpenAPI schema.

Every failure is one JSON shape ``{"error": code, "message": text}``, never a stack trace: bad parameters 400
naming the parameter (FastAPI's validation errors rewritten); the index unreachable, overloaded or timing out
503 with ``Retry-After``; a query the index refuses 400 with Elasticsearch's reason type; anything unexpected
500 with an incident id (the traceback goes to the server log only).
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from typing import Annotated, Any, Literal, get_args
from urllib.parse import unquote_plus
from zoneinfo import available_timezones

from elasticsearch import ApiError, ConnectionError as EsConnectionError, TransportError
from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from crawl_assets.api.access import retry_after_header
from crawl_assets.query import steps
from crawl_assets.query.filters import RecordFilter
from crawl_assets.schema.record import Platform


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

bearer = HTTPBearer(auto_error=False, description="An API key from `crawl-assets api keys create`")
header_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="The same key, in a header of its own")
# URL parameter names that carry a credential, compared without case, '-' or '_' (``API-Key``, ``access_token``).
_SECRET_NAMES = frozenset({"apikey", "key", "token", "accesstoken", "xapikey", "authorization", "password", "secret"})
_KEY = re.compile(r"cak_([0-9a-f]{12})_", re.IGNORECASE)
_UNAUTHORIZED = ApiProblem(401, "unauthorized", "missing, unknown or revoked API key: send `Authorization: Bearer <key>`",
                           {"WWW-Authenticate": "Bearer"})


def plain(text: str) -> str:
    """``text`` percent-decoded until it stops changing (a key encoded twice is still a key; at most 4 rounds)."""
    for _ in range(4):
        decoded = unquote_plus(text)
        if decoded == text:
            break
        text = decoded
    return text


def names_a_secret(name: str) -> bool:
    """Whether a URL parameter of this name carries a credential (any case and percent-encoding)."""
    return re.sub(r"[-_\s]", "", plain(name).casefold()) in _SECRET_NAMES


def holds_a_key(text: str) -> re.Match[str] | None:
    """Where an API key starts in ``text`` (any case and percent-encoding); its group 1 is the key's id."""
    return _KEY.search(plain(text)) if "cak" in text.lower() or "%" in text else None


@dataclass(frozen=True)
class Caller:
    key_id: str
    tenant: str


async def caller(request: Request,
                 credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
                 x_api_key: Annotated[str | None, Depends(header_key)]) -> Caller:
    """Async: a key verified in the last seconds is checked from the cache on the event loop; only a cache
    miss (a database read) goes to a worker thread (hops matter: see above)."""
    if any(names_a_secret(name) or holds_a_key(value) for name, value in request.query_params.multi_items()):
        raise ApiProblem(400, "bad_request", "send the API key in the Authorization header, not in the URL")
    presented = credentials.credentials if credentials is not None else x_api_key
    state = request.app.state.api
    address = request.client.host if request.client else ""
    blocked = state.failed_logins.waiting(address)
    if blocked:  # no key is checked for this address until its failures have drained
        raise ApiProblem(429, "too_many_failures", f"too many failed logins from this address; retry in "
                         f"{retry_after_header(blocked)} s", {"Retry-After": retry_after_header(blocked)})
    key = None
    if presented:
        known, key = state.keys.verify_cached(presented)
        if not known:
            key = await run_in_threadpool(state.keys.verify, presented)
    if key is None:
        state.failed_logins.take(address)
        raise _UNAUTHORIZED
    wait = state.limiter.take(key.key_id, key.rate_per_minute)
    if wait:
        raise ApiProblem(429, "rate_limited", f"rate limit of this key exceeded; retry in {retry_after_header(wait)} s",
                         {"Retry-After": retry_after_header(wait)})
    return Caller(key.key_id, key.tenant)


CallerDep = Annotated[Caller, Depends(caller)]


MAX_VALUES = 50
MAX_VALUE = 200
MAX_QUERY = 1000
SLUG = r"^[a-z0-9][a-z0-9_-]{0,62}$"
SOURCE = r"^([a-z0-9][a-z0-9_-]{0,62}\.){0,2}[a-z0-9][a-z0-9_-]{0,62}$"
LANG = r"^[a-z]{2,3}$"
# No control characters (a value is a term, never syntax).
PRINTABLE = r"^[^\x00-\x1f\x7f]+$"
DeletedRule = Literal["exclude", "include", "only"]


def _values(description: str, pattern: str = PRINTABLE, max_length: int = MAX_VALUE):  # noqa: ANN202
    return Query(description=description, max_length=MAX_VALUES,
                 json_schema_extra={"items": {"type": "string", "pattern": pattern, "maxLength": max_length, "minLength": 1}})


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})")
INSTANT_SCHEMA = {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "string", "format": "date"}]}


def instant(description: str):  # noqa: ANN201
    return Query(description=description + " (RFC 3339 date-time with Z or an offset, or a date: midnight UTC)",
                 max_length=40, json_schema_extra=INSTANT_SCHEMA)


def utc(text: str | None, name: str) -> datetime | None:
    """A query parameter's instant, strictly as documented; 400 naming the parameter otherwise."""
    if text is None:
        return None
    try:
        if _DATE.fullmatch(text):
            value = datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
        elif _DATE_TIME.fullmatch(text):
            value = datetime.fromisoformat(text.upper())
        else:
            raise ValueError(text)
    except ValueError:
        raise bad_request(f"{name}: {text[:40]!r} is not a date-time with Z or an offset (2026-01-31T10:00:00Z) "
                          "or a date (2026-01-31)") from None
    if not 1900 <= value.year <= 2200:
        raise bad_request(f"{name}: year must be between 1900 and 2200")
    return value.astimezone(timezone.utc)


def _check_items(name: str, values: list[str] | None, pattern: str, max_length: int = MAX_VALUE) -> tuple[str, ...]:
    out = []
    for value in values or []:
        if not value or len(value) > max_length or not re.fullmatch(pattern.strip("^$"), value):
            raise bad_request(f"{name}: {value[:50]!r} is not a valid value ({_RULES.get(pattern, 'printable text')}, "
                              f"at most {max_length} characters)")
        out.append(value)
    return tuple(dict.fromkeys(out))


_RULES = {SLUG: "lowercase letters, digits, '-' or '_'", SOURCE: "a source name or TENANT.PLATFORM.NAME", LANG: "an ISO 639 code such as fa or en",
          PRINTABLE: "printable text"}


async def record_filter(  # async: checks, and with entity= one search awaited on the loop (see above)
    request: Request,
    who: CallerDep,  # the caller's tenant (for entity=; FastAPI resolves the caller once per request)
    q: Annotated[str | None, Query(max_length=MAX_QUERY, description=(
        "Full-text query over the Persian-aware text fields: words are AND-ed; \"a phrase\", a | b, -word, "
        "prefix*. ZWNJ, Arabic/Persian letter forms and digits are folded."))] = None,
    platform: Annotated[list[Literal[get_args(Platform)]] | None, Query(max_length=MAX_VALUES,  # type: ignore[misc]
                                                                        description="Platforms (repeat)")] = None,
    source: Annotated[list[str] | None, _values("Sources: a registered name (gen-a) or a key (acme.x.gen-a) (repeat)",
                                                SOURCE, 190)] = None,
    lang: Annotated[list[str] | None, _values("Languages, ISO 639-1 (repeat)", LANG, 3)] = None,
    author: Annotated[list[str] | None, _values("Authors: platform id or handle, @ optional (repeat)")] = None,
    hashtag: Annotated[list[str] | None, _values("Hashtags, # optional; folded like the index (repeat)")] = None,
    mention: Annotated[list[str] | None, _values("Mentioned handles, @ optional (repeat)")] = None,
    kind: Annotated[list[str] | None, _values("Record kinds: post, reply, quote, repost, comment, review, ... (repeat)",
                                              SLUG, 63)] = None,
    topic: Annotated[list[str] | None, _values("Forum topics (Telegram): a topic's key telegram:<chat>:<topic> or its "
                                               "exact title (repeat)")] = None,
    start: Annotated[str | None, instant("created_at >= start")] = None,
    end: Annotated[str | None, instant("created_at < end")] = None,
    deleted: Annotated[DeletedRule, Query(description="Tombstones: exclude (default), include, or only them")] = "exclude",
    entity: Annotated[list[str] | None, _values(
        "Entities the records name (entities enricher): an id such as loc:tehran or per:sara_rahimi, or a name "
        "such as Tehran or تهران, folded like the enricher folds names (repeat)")] = None,
) -> RecordFilter:
    lo, hi = utc(start, "start"), utc(end, "end")
    if lo and hi and lo >= hi:
        raise bad_request("start must be before end")
    if q is not None and (not q.strip() or any(ord(c) < 32 and c not in "\t\n" for c in q)):
        raise bad_request("q: give words to search for (no control characters)")
    entities = _check_items("entity", entity, PRINTABLE)
    keys = await _entity_keys(request, who.tenant, entities, lo, hi) if entities else None
    return RecordFilter(
        entities=entities, entity_keys=keys, q=q.strip() if q else None, platforms=tuple(dict.fromkeys(platform or [])),
        sources=_check_items("source", source, SOURCE, 190), langs=_check_items("lang", lang, LANG, 3),
        authors=_check_items("author", author, PRINTABLE), hashtags=_check_items("hashtag", hashtag, PRINTABLE),
        mentions=_check_items("mention", mention, PRINTABLE), kinds=_check_items("kind", kind, SLUG, 63),
        topics=_check_items("topic", topic, PRINTABLE), start=lo, end=hi, deleted=deleted)


async def _entity_keys(request: Request, tenant: str, entities: tuple[str, ...], start: datetime | None,
                       end: datetime | None) -> tuple[str, ...]:
    """The keys of the records naming ``entities`` (created in [start, end)), from the features index; 400 when
    they are more than an ``ids`` filter carries."""
    from crawl_assets.enrich.search import MAX_KEYS, entity_keys, entity_keys_search, entity_more

    search = entity_keys_search(tenant, list(entities))
    bounds = {op: v.isoformat() for op, v in (("gte", start), ("lt", end)) if v is not None}
    if bounds:
        search["query"]["bool"]["filter"].append({"range": {"created_at": bounds}})
    state = request.app.state.api
    client = state.async_es()
    if client is None:
        body = await run_in_threadpool(lambda: state.es.search(**search).body)
    else:
        body = (await client.search(**search)).body
    if entity_more(body):
        raise bad_request(f"entity: more than {MAX_KEYS} records name {', '.join(entities)[:100]}: narrow the "
                          "range with start and end")
    return tuple(entity_keys(body))


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    return frozenset(available_timezones()) | {"UTC"}


def zone(tz: str) -> str:
    """``tz`` when it is an IANA time zone name, else a 400 naming it."""
    if tz not in _zones():
        raise bad_request(f"tz: unknown time zone {tz[:60]!r} (an IANA name such as UTC or Asia/Tehran)")
    return tz
