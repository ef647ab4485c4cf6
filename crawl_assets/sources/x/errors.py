"""What can go wrong talking to X, sorted by what the caller must do about it.

``XPermanentError``: retrying cannot help (revoked token, no access, suspended/unknown/protected
account) — the source is paused. ``XRateLimitWait``: the server asked for a wait longer than we sleep
in place — the step ends and Dagster retries after it. ``XTransientError``: retries ran out on 5xx,
timeouts or broken pages — the run's retry policy takes over. ``XBadRequest``: the request itself was
refused (400); the caller may adapt it (a smaller page).
"""

from __future__ import annotations

from typing import Any


class XError(Exception):
    """Any failure of an X API call; ``endpoint`` names the API route (never the token)."""

    def __init__(self, message: str, *, endpoint: str = "", status: int | None = None):
        super().__init__(message)
        self.endpoint = endpoint
        self.status = status


class XPermanentError(XError):
    """Retrying will not help; the source needs a person (credentials, access, a gone account)."""


class XTransientError(XError):
    """Server errors, timeouts or malformed pages that outlasted the in-place retries."""


class XRateLimitWait(XError):
    """The rate-limit window resets later than we are willing to sleep in place."""

    def __init__(self, message: str, *, seconds: float, endpoint: str = ""):
        super().__init__(message, endpoint=endpoint, status=429)
        self.seconds = seconds


class XBadRequest(XError):
    """A 400: ``parameters`` maps each refused parameter to the messages about it."""

    def __init__(self, message: str, *, endpoint: str = "", parameters: dict[str, str] | None = None):
        super().__init__(message, endpoint=endpoint, status=400)
        self.parameters = parameters or {}


def problem_text(body: Any) -> str:
    """A short human reason from an X error body (``detail``/``title``/``errors[].message``)."""
    if not isinstance(body, dict):
        return ""
    parts: list[str] = []
    for err in body.get("errors") or []:
        if isinstance(err, dict):
            parts.append(str(err.get("detail") or err.get("message") or err.get("title") or ""))
    if not parts:
        parts.append(str(body.get("detail") or body.get("title") or ""))
    if body.get("reason"):
        parts.append(f"({body['reason']})")
    return " ".join(p for p in parts if p)[:400]


def bad_request(body: Any, endpoint: str) -> XBadRequest:
    """The 400 body as an ``XBadRequest`` naming each refused parameter."""
    params: dict[str, str] = {}
    for err in (body.get("errors") if isinstance(body, dict) else None) or []:
        if isinstance(err, dict):
            for name in (err.get("parameters") or {}):
                params[name] = str(err.get("message") or err.get("detail") or "")
    return XBadRequest(f"{endpoint}: 400 {problem_text(body)}", endpoint=endpoint, parameters=params)


def resource_failure(body: dict[str, Any], endpoint: str) -> XPermanentError | None:
    """The permanent failure a 200 body reports for the *requested* account, if any.

    X answers "user not found", "suspended" and "protected" with status 200 and an ``errors`` list and
    no ``data``. Errors about expanded objects (a deleted parent) come *with* data and are not failures.
    """
    if body.get("data"):
        return None
    for err in body.get("errors") or []:
        if not isinstance(err, dict):
            continue
        if err.get("resource_type") == "user" and err.get("parameter") in ("id", "username"):
            detail = str(err.get("detail") or err.get("title") or "account unavailable")
            return XPermanentError(f"{endpoint}: {detail}", endpoint=endpoint, status=200)
    return None
