"""Bounded reads of HTTP responses: a source is not trusted to send a reasonable amount of data.

A body is streamed and abandoned as soon as it passes the cap (a declared Content-Length over the cap is
refused before reading anything); the cap applies to the decoded bytes, so a compressed body cannot
expand past it either. 16 MiB is far above any page the supported APIs send (an X page of 100 posts with
expansions is well under 1 MiB).
"""

from __future__ import annotations

import httpx

MAX_RESPONSE_BYTES = 16 << 20


class BodyTooLarge(Exception):
    """A response body over the cap (the message says how much was allowed)."""


def read_capped(resp: httpx.Response, cap: int = MAX_RESPONSE_BYTES) -> bytes:
    """The (decoded) body of a streamed response, or ``BodyTooLarge`` once it passes ``cap`` bytes."""
    declared = resp.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise BodyTooLarge(f"response body of {declared} bytes is over the {cap}-byte limit")
    chunks: list[bytes] = []
    size = 0
    for chunk in resp.iter_bytes():
        size += len(chunk)
        if size > cap:
            raise BodyTooLarge(f"response body over the {cap}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks)


def get_capped(http: httpx.Client, method: str, path: str, cap: int = MAX_RESPONSE_BYTES,
               **kwargs: object) -> tuple[httpx.Response, bytes]:
    """One request whose body is read under ``cap``: (the response, for its status and headers; its body)."""
    with http.stream(method, path, **kwargs) as resp:  # type: ignore[arg-type]
        return resp, read_capped(resp, cap)
