"""Reads from sources are bounded (issue 15, item 7): the X and REST clients read whole response bodies,
so a hostile or broken server could make a sync hold any amount of memory. Bodies are streamed and
abandoned past the cap (httpx MockTransport serves an endless body; nothing of ours is patched)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from crawl_assets.sdk.errors import TransientError
from crawl_assets.sdk.http import HttpClient, RetrySettings
from crawl_assets.sources.x.client import XClient, XRetrySettings

MIB = 1 << 20
CAP = 16 * MIB  # the default cap


class Endless:
    """A JSON-looking body of ``total`` bytes served in 1 MiB chunks; counts what the client pulled."""

    def __init__(self, total: int = 64 * MIB):
        self.total = total
        self.pulled = 0

    def __iter__(self) -> Iterator[bytes]:
        yield b'{"data": ["'
        while self.pulled < self.total:
            self.pulled += MIB
            yield b"x" * MIB

    def transport(self, declared: bool = False) -> httpx.MockTransport:
        headers = {"content-length": str(self.total)} if declared else {}
        return httpx.MockTransport(lambda request: httpx.Response(200, headers=headers, content=iter(self)))


@pytest.mark.parametrize("declared", [False, True])
def test_the_x_client_stops_reading_a_body_over_the_cap(declared):
    body = Endless()
    http = httpx.Client(base_url="https://api.x.test", transport=body.transport(declared))
    client = XClient(http, XRetrySettings(max_retries=0), sleep=lambda s: None)
    with pytest.raises(TransientError):
        client.get("tweets", "/2/tweets", {})
    assert body.pulled <= CAP + MIB, f"read {body.pulled} bytes"
    if declared:
        assert body.pulled == 0, "a declared length over the cap is refused before reading"


@pytest.mark.parametrize("declared", [False, True])
def test_the_rest_client_stops_reading_a_body_over_the_cap(declared):
    body = Endless()
    http = httpx.Client(base_url="https://api.test", transport=body.transport(declared))
    client = HttpClient(http, api="test", settings=RetrySettings(max_retries=0), sleep=lambda s: None)
    with pytest.raises(TransientError):
        client.get("items", "/items")
    assert body.pulled <= CAP + MIB, f"read {body.pulled} bytes"
