"""What every request brings before its route runs: who is calling, and the filter it asks for.

Who is calling: the API key in ``Authorization: Bearer <key>`` (or ``X-API-Key``) names one tenant, and
that tenant is the only one every query of the request reads. Keys in the URL are refused (URLs end up
in access logs and browser histories). The rate limit is taken here, per key; failed logins are limited per
client address (uvicorn takes it from ``X-Forwarded-For`` when the proxy in front is trusted).

The query parameters every read shares (the filter), validated with clear messages. Lists are repeated
parameters (``?platform=x&platform=telegram``); each holds at most ``MAX_VALUES`` values of at most
``MAX_VALUE`` characters. Instants are exactly what the schema says: an RFC 3339 date-time with ``Z`` or an
offset (``2026-01-31T10:00:00Z``), or a date (``2026-01-31``: midnight UTC); no epoch numbers, no local times
without an offset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from typing import Annotated, Literal, get_args
from urllib.parse import unquote_plus
from zoneinfo import available_timezones

from fastapi import Depends, Query, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from crawl_assets.api.answers import ApiProblem, bad_request
from crawl_assets.api.access import retry_after_header
from crawl_assets.query.filters import RecordFilter
from crawl_assets.schema.record import Platform

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
    miss (a database read) goes to a worker thread (see answers.py for why hops matter)."""
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


async def record_filter(  # async: checks, and with entity= one search awaited on the loop (answers.py)
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
