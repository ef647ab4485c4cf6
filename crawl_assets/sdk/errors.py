"""What can go wrong calling a source's API, sorted by what the caller must do about it, and the rules
(data) that sort an API's answers into it.

- ``PermanentError``: retrying cannot help (revoked credentials, no access, the thing is gone, a refused
  request) → the source is paused;
- ``RateLimitWait``: the server wants a wait longer than we sleep in place → the step ends and is retried
  after it;
- ``TransientError``: retries ran out on 5xx, timeouts or broken bodies → the run's retry policy;
- ``BadRequest``: the request itself was refused in a way the caller may adapt to (X: a smaller page).

What a live collector tells the orchestration, sorted from the above: ``PauseSource`` (pause it, no retry)
and ``RetryLater`` (end the step, retry after the wait); anything else goes to the run's retry policy.

Messages name the endpoint, never a secret.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import httpx
import orjson

TRANSIENT_STATUS = frozenset({408, 500, 502, 503, 504})


class SourceError(Exception):
    """Any failure of an API call; ``endpoint`` names the API route (never a credential)."""

    def __init__(self, message: str, *, endpoint: str = "", status: int | None = None):
        super().__init__(message)
        self.endpoint = endpoint
        self.status = status


class PermanentError(SourceError):
    """Credentials revoked, no access, the thing is gone, or the request itself is refused."""


class TransientError(SourceError):
    """Server errors, timeouts or malformed bodies that outlasted the in-place retries."""


class RateLimitWait(SourceError):
    """The rate-limit window resets later than we are willing to sleep in place."""

    def __init__(self, message: str, *, seconds: float, endpoint: str = ""):
        super().__init__(message, endpoint=endpoint, status=429)
        self.seconds = seconds


class SourceConfigError(ValueError):
    """The registry entry asks for something this source cannot do (wrong kind, a too slow cadence):
    the run fails at once, without retries, with the message."""


class MissingCredential(LookupError):
    """A source's tenant has no secret of the name it asks for (the message names the variable)."""


class PauseSource(Exception):
    """A live collector's verdict that retrying cannot help (a refused credential, a bad registry entry): the
    orchestration pauses the source with this reason (redacted) and fails the step without retries."""


class RetryLater(Exception):
    """A live collector's request to end the step now and run it again after ``seconds`` (a rate-limit window,
    a busy account), at most ``max_retries`` times; what was stored and checkpointed stays."""

    def __init__(self, message: str, *, seconds: int, max_retries: int):
        super().__init__(message)
        self.seconds = seconds
        self.max_retries = max_retries


class BadRequest(SourceError):
    """A refused request (``ErrorRules.bad_request``): ``parameters`` maps each refused parameter to the
    messages about it."""

    def __init__(self, message: str, *, endpoint: str = "", status: int = 400,
                 parameters: dict[str, str] | None = None):
        super().__init__(message, endpoint=endpoint, status=status)
        self.parameters = parameters or {}


def refusal_text(resp: httpx.Response, raw: bytes) -> str:
    """A short reason from an error body (``errors``/``message``/``error``), bounded in length."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw[:200].decode("utf-8", "replace")
    parts: list[str] = []
    if isinstance(body, dict):
        for key in ("errors", "error", "message", "error_description", "detail"):
            value = body.get(key)
            if isinstance(value, list):
                parts += [str(v.get("message") if isinstance(v, dict) else v) for v in value[:3]]
            elif isinstance(value, dict):
                parts.append(str(value.get("message") or value.get("status") or ""))
            elif value:
                parts.append(str(value))
    return " ".join(p for p in parts if p)[:300] or resp.reason_phrase


@dataclass(frozen=True)
class ErrorRules:
    """How one API's answers are sorted; :class:`crawl_assets.sdk.http.HttpClient` interprets them.

    Statuses in none of the sets below are ``PermanentError``s, worded ``"HTTP <status> <reason>"`` (or
    ``messages[status]`` with ``{reason}`` filled in).
    """

    success: frozenset[int] = frozenset(range(200, 300))
    json_object_only: bool = False  # a success must be a JSON object (an empty or other body is malformed)
    json_body: bool = True  # False: a success's body is kept as received, unparsed (HTML pages); ``Page.json`` is None
    transient: frozenset[int] = TRANSIENT_STATUS  # retried with backoff, then TransientError
    throttled: frozenset[int] = frozenset({429})  # waited out in place, or RateLimitWait
    refresh_auth_on: frozenset[int] = frozenset({401})  # one auth refresh first (when the client has auth)
    bad_request: frozenset[int] = frozenset()  # BadRequest with the refused parameters
    messages: Mapping[int, str] = field(default_factory=dict)
    throttled_text: str = "rate limited; retry in {wait:.0f}s"
    reason: Callable[[httpx.Response, bytes], str] = refusal_text  # the reason an error body gives
    parameters: Callable[[bytes], tuple[str, dict[str, str]]] | None = None  # bad request → (reason, parameters)
