"""Who is calling: the API key in ``Authorization: Bearer <key>`` (or ``X-API-Key``) names one tenant, and
that tenant is the only one every query of the request reads. Keys in the URL are refused (URLs end up
in access logs and browser histories). The rate limit is taken here, per key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from crawl_assets.api.errors import ApiProblem
from crawl_assets.api.ratelimit import retry_after_header

bearer = HTTPBearer(auto_error=False, description="An API key from `crawl-assets api keys create`")
header_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="The same key, in a header of its own")
_UNAUTHORIZED = ApiProblem(401, "unauthorized", "missing, unknown or revoked API key: send `Authorization: Bearer <key>`",
                           {"WWW-Authenticate": "Bearer"})


@dataclass(frozen=True)
class Caller:
    key_id: str
    tenant: str


async def caller(request: Request,
                 credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
                 x_api_key: Annotated[str | None, Depends(header_key)]) -> Caller:
    """Async: a key verified in the last seconds is checked from the cache on the event loop; only a cache
    miss (a database read) goes to a worker thread (see answers.py for why hops matter)."""
    if any(name in request.query_params for name in ("api_key", "key", "token", "access_token")):
        raise ApiProblem(400, "bad_request", "send the API key in the Authorization header, not in the URL")
    presented = credentials.credentials if credentials is not None else x_api_key
    state = request.app.state.api
    key = None
    if presented:
        known, key = state.keys.verify_cached(presented)
        if not known:
            key = await run_in_threadpool(state.keys.verify, presented)
    if key is None:
        raise _UNAUTHORIZED
    wait = state.limiter.take(key.key_id, key.rate_per_minute)
    if wait:
        raise ApiProblem(429, "rate_limited", f"rate limit of this key exceeded; retry in {retry_after_header(wait)} s",
                         {"Retry-After": retry_after_header(wait)})
    return Caller(key.key_id, key.tenant)


CallerDep = Annotated[Caller, Depends(caller)]
