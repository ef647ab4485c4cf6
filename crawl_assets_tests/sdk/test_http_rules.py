"""The one request loop under both rule sets it serves (the REST APIs' defaults and X's), answer by answer:
which error each status becomes and its exact words, auth refresh, 429 waited in place or handed back,
pacing from headers, malformed bodies retried. httpx's MockTransport answers; a fake clock and sleep
record every wait (nothing of ours is patched)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import orjson
import pytest

from crawl_assets.sdk.errors import BadRequest, PermanentError, RateLimitWait, TransientError
from crawl_assets.sdk.http import HttpClient, RateHeaders, RetrySettings
from crawl_assets.sources.x.client import XClient, XRetrySettings

T0 = 1_700_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += seconds


def answers(*responses: httpx.Response | Callable[[httpx.Request], httpx.Response]) -> tuple[httpx.Client, list]:
    """A client whose transport gives ``responses`` in order (the last one repeats); the requests it saw."""
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        r = responses[min(len(seen), len(responses)) - 1]
        return r(request) if callable(r) else r

    return httpx.Client(base_url="https://api.test", transport=httpx.MockTransport(handle)), seen


def rest(*responses, **kwargs) -> tuple[HttpClient, Clock, list]:
    http, seen = answers(*responses)
    clock = Clock()
    settings = kwargs.pop("settings", RetrySettings(max_retries=2))
    return HttpClient(http, api="demo", settings=settings, sleep=clock.sleep, clock=lambda: clock.now,
                      jitter=lambda: 0.5, **kwargs), clock, seen


def x(*responses, **settings) -> tuple[XClient, Clock, list]:
    http, seen = answers(*responses)
    clock = Clock()
    return XClient(http, XRetrySettings(max_retries=2, **settings), sleep=clock.sleep, clock=lambda: clock.now,
                   jitter=lambda: 0.5), clock, seen


def js(status: int, body: object, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, content=orjson.dumps(body), headers=headers)


# -- the REST rule set (Discourse, Play, Intercom, Hacker News) ---------------------------------------------

@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 422, 405])
def test_rest_refusals_are_permanent_and_say_why(status):
    client, _, seen = rest(js(status, {"errors": ["not for you"]}))
    with pytest.raises(PermanentError) as caught:
        client.get("items", "/items")
    assert str(caught.value) == f"demo items: HTTP {status} not for you"
    assert (caught.value.status, caught.value.endpoint, len(seen)) == (status, "items", 1)


def test_rest_reason_falls_back_to_the_raw_body_then_the_phrase():
    client, _, _ = rest(httpx.Response(403, content=b"<html>nope</html>"))
    with pytest.raises(PermanentError, match=r"^demo items: HTTP 403 <html>nope</html>$"):
        client.get("items", "/items")
    client, _, _ = rest(js(404, {}))
    with pytest.raises(PermanentError, match=r"^demo items: HTTP 404 Not Found$"):
        client.get("items", "/items")


@pytest.mark.parametrize("status", [408, 500, 502, 503, 504])
def test_rest_server_errors_are_retried_with_backoff_then_transient(status):
    client, clock, seen = rest(httpx.Response(status))
    with pytest.raises(TransientError, match=rf"^demo items: HTTP {status} after 3 attempts$"):
        client.get("items", "/items")
    assert len(seen) == 3 and clock.slept == [1.0, 2.0] and client.stats.retries == 2


def test_rest_success_is_any_2xx_and_an_empty_body_is_none():
    client, _, _ = rest(httpx.Response(204))
    page = client.get("items", "/items")
    assert page.json is None and page.body == b""


def test_rest_malformed_json_is_retried_and_then_transient():
    client, clock, seen = rest(httpx.Response(200, content=b"{broken"), js(200, {"ok": 1}))
    assert client.get("items", "/items").json == {"ok": 1}
    assert len(seen) == 2 and clock.slept == [1.0]
    client, _, _ = rest(httpx.Response(200, content=b"{broken"))
    with pytest.raises(TransientError, match="malformed JSON body after 3 attempts"):
        client.get("items", "/items")


def test_rest_401_refreshes_auth_once():
    calls: list[bool] = []

    def auth(refresh: bool) -> dict[str, str]:
        calls.append(refresh)
        return {"Authorization": f"Bearer {'new' if refresh else 'old'}"}

    client, _, seen = rest(js(401, {"error": "expired"}), js(200, {"ok": 1}), auth=auth)
    assert client.get("items", "/items").json == {"ok": 1}
    assert calls == [False, True] and seen[1].headers["authorization"] == "Bearer new"
    client, _, _ = rest(js(401, {"error": "revoked"}), auth=auth)
    with pytest.raises(PermanentError, match="^demo items: HTTP 401 revoked$"):
        client.get("items", "/items")


def test_rest_429_is_waited_in_place_then_handed_back():
    client, clock, _ = rest(httpx.Response(429, headers={"retry-after": "7"}), js(200, {}))
    client.get("items", "/items")
    assert clock.slept == [7.0] and client.stats.throttled == 1 and client.stats.rate_limit_wait_seconds == 7.0
    client, clock, seen = rest(httpx.Response(429, headers={"retry-after": "600"}))
    with pytest.raises(RateLimitWait, match=r"^demo items: rate limited; retry in 600s$") as caught:
        client.get("items", "/items")
    assert caught.value.seconds == 600 and clock.slept == [] and len(seen) == 1
    client, clock, seen = rest(httpx.Response(429))  # no header: the default wait, at most max_throttled times
    with pytest.raises(RateLimitWait):
        client.get("items", "/items")
    assert clock.slept == [30.0] * 3 and len(seen) == 4


def test_rest_header_budget_waits_before_the_reset():
    spent = {"x-ratelimit-remaining": "2", "x-ratelimit-reset": str(int(T0) + 20)}
    client, clock, _ = rest(js(200, {}, spent), js(200, {}),
                            rate=RateHeaders(remaining="x-ratelimit-remaining", reset="x-ratelimit-reset",
                                             low_watermark=2))
    client.get("items", "/items")
    client.get("items", "/items")
    assert clock.slept == [20.5]  # the reset plus the margin, before the second request
    far = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(T0) + 3600)}
    client, _, _ = rest(js(200, {}, far), rate=RateHeaders(remaining="x-ratelimit-remaining",
                                                          reset="x-ratelimit-reset"))
    client.get("items", "/items")
    with pytest.raises(RateLimitWait, match="^demo items: request budget spent; window resets in 3600s$"):
        client.get("items", "/items")


def test_transport_failures_are_retried():
    def drop(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    client, _, seen = rest(drop)
    with pytest.raises(TransientError, match="^demo items: ConnectError after 3 attempts$"):
        client.get("items", "/items")
    assert len(seen) == 3


# -- the X rule set --------------------------------------------------------------------------------------

def test_x_400_is_a_bad_request_naming_its_parameters():
    body = {"errors": [{"parameters": {"max_results": ["500"]}, "message": "must be <= 100"}], "title": "Invalid"}
    client, _, _ = x(js(400, body))
    with pytest.raises(BadRequest) as caught:
        client.get("search/all", "/2/tweets/search/all", {})
    assert str(caught.value) == "search/all: 400 must be <= 100"
    assert caught.value.parameters == {"max_results": "must be <= 100"}


def test_x_refusals_use_its_error_body_and_word_401():
    client, _, _ = x(js(401, {"title": "Unauthorized", "detail": "Unauthorized"}))
    with pytest.raises(PermanentError, match=r"^users/tweets: HTTP 401 token rejected \(revoked or invalid\): "
                                             r"Unauthorized$"):
        client.get("users/tweets", "/2/users/1/tweets", {})
    client, _, _ = x(js(403, {"detail": "no access", "reason": "client-not-enrolled"}))
    with pytest.raises(PermanentError, match=r"^users/tweets: HTTP 403 no access \(client-not-enrolled\)$"):
        client.get("users/tweets", "/2/users/1/tweets", {})


def test_x_success_is_200_with_an_object_only():
    client, _, _ = x(httpx.Response(204))
    with pytest.raises(PermanentError, match="^tweets: HTTP 204 No Content$"):
        client.get("tweets", "/2/tweets", {})
    client, clock, seen = x(js(200, [1, 2]), js(200, {"data": []}))
    assert client.get("tweets", "/2/tweets", {}).json == {"data": []}
    assert len(seen) == 2 and clock.slept == [2.0]  # X's own backoff


def test_x_429_holds_the_endpoint_until_its_window_resets():
    reset = str(int(T0) + 30)
    client, clock, _ = x(js(429, {}, {"x-rate-limit-remaining": "0", "x-rate-limit-reset": reset}), js(200, {}))
    client.get("tweets", "/2/tweets", {})
    assert clock.slept == [31.0] and client.stats.throttled == 1  # reset + margin, waited before the retry
    daily = {"x-app-limit-24hour-remaining": "0", "x-app-limit-24hour-reset": str(int(T0) + 7200)}
    client, clock, _ = x(js(429, {}, daily))
    with pytest.raises(RateLimitWait, match=r"^tweets: rate limited; window resets in 7201s$"):
        client.get("tweets", "/2/tweets", {})
    assert clock.slept == []


def test_x_full_archive_keeps_its_interval():
    client, clock, _ = x(js(200, {}), full_archive_interval_seconds=1.5)
    for _ in range(3):
        client.get("search/all", "/2/tweets/search/all", {})
    client.get("tweets", "/2/tweets", {})
    assert clock.slept == [1.5, 1.5]
