"""Who is calling: the API key in ``Authorization: Bearer <key>`` (or ``X-API-Key``) names one tenant, and
that tenant is the only one every query of the request reads. Keys in the URL are refused (URLs end up
in access logs and browser histories). The rate limit is taken here, per key; failed logins are limited per
client address (uvicorn takes it from ``X-Forwarded-For`` when the proxy in front is trusted)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import unquote_plus

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from crawl_assets.api.answers import ApiProblem
from crawl_assets.api.state import retry_after_header

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
