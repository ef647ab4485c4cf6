"""How X answers are sorted (the X API v2 ``ErrorRules``), and the failures X reports inside a 200.

Only a 200 with a JSON object is an answer; a 400 is a ``BadRequest`` naming each refused parameter (the
sync may adapt: a smaller page); a 401 says the token is rejected; other refusals are permanent, with the
reason X's error body gives (``detail``/``title``/``errors[].message``).
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from crawl_assets.sdk.errors import ErrorRules, PermanentError


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


def _error_body(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {"detail": raw[:200].decode("utf-8", "replace")}


def refusal_reason(resp: httpx.Response, raw: bytes) -> str:
    return problem_text(_error_body(raw)) or resp.reason_phrase


def refused_parameters(raw: bytes) -> tuple[str, dict[str, str]]:
    """A 400 body: its reason, and each refused parameter with the message about it."""
    body = _error_body(raw)
    params: dict[str, str] = {}
    for err in (body.get("errors") if isinstance(body, dict) else None) or []:
        if isinstance(err, dict):
            for name in (err.get("parameters") or {}):
                params[name] = str(err.get("message") or err.get("detail") or "")
    return problem_text(body), params


X_RULES = ErrorRules(
    success=frozenset({200}),
    json_object_only=True,
    bad_request=frozenset({400}),
    messages={401: "token rejected (revoked or invalid): {reason}"},
    throttled_text="rate limited; window resets in {wait:.0f}s",
    reason=refusal_reason,
    parameters=refused_parameters,
)


def resource_failure(body: dict[str, Any], endpoint: str) -> PermanentError | None:
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
            return PermanentError(f"{endpoint}: {detail}", endpoint=endpoint, status=200)
    return None
