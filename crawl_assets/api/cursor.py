"""Opaque pagination cursors: the point in time and the last sort values, bound to the tenant and the query
that made them and signed (HMAC-SHA256 with a secret shared by the workers), so a cursor cannot be
forged, edited or replayed with another query or by another tenant's key."""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

import orjson

from crawl_assets.index.filters import RecordFilter
from crawl_assets.index.search import Continuation

MAX_CURSOR = 8192


class BadCursor(ValueError):
    pass


def query_fingerprint(tenant: str, flt: RecordFilter, sort: str, size: int) -> str:
    blob = orjson.dumps({"t": tenant, "f": flt.describe(), "s": sort, "n": size}, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()[:32]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encode(secret: bytes, fingerprint: str, cont: Continuation) -> str:
    body = _b64(orjson.dumps({"q": fingerprint, "p": cont.pit, "a": cont.after}))
    sig = _b64(hmac.new(secret, body.encode(), hashlib.sha256).digest())
    return f"{body}.{sig}"


def decode(secret: bytes, fingerprint: str, cursor: str) -> Continuation:
    if len(cursor) > MAX_CURSOR or cursor.count(".") != 1:
        raise BadCursor("malformed cursor: pass the `next` value of the previous page unchanged")
    body, sig = cursor.split(".")
    expected = _b64(hmac.new(secret, body.encode(), hashlib.sha256).digest())
    if not hmac.compare_digest(sig, expected):
        raise BadCursor("invalid cursor: pass the `next` value of the previous page unchanged")
    try:
        data: Any = orjson.loads(_unb64(body))
    except (ValueError, orjson.JSONDecodeError) as exc:
        raise BadCursor("malformed cursor") from exc
    if data.get("q") != fingerprint:
        raise BadCursor("this cursor belongs to another query: repeat the same parameters (q, filters, sort, size) "
                        "with it")
    pit = data.get("p")
    return Continuation(None if pit is None else str(pit), list(data["a"]))
