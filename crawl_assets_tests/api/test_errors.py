"""Every bad parameter is a 4xx naming it; missing keys 401; past the rate 429 with Retry-After; the index
unreachable or overloaded 503 with Retry-After; nothing ever answers with a stack trace."""

from __future__ import annotations

import socket

import pytest
from elasticsearch import Elasticsearch

from crawl_assets_tests.api.conftest import auth, make_client
from crawl_assets_tests.es_node.fixtures import resource
from crawl_assets_tests.es_node.proxy import FaultProxy

BAD = [
    ("/v1/search", {"size": 0}, "size"), ("/v1/search", {"size": 501}, "size"), ("/v1/search", {"sort": "random"}, "sort"),
    ("/v1/search", {"start": "yesterday"}, "start"), ("/v1/search", {"start": "2026-02-01", "end": "2026-01-01"}, "start"),
    ("/v1/search", {"platform": "myspace"}, "platform"), ("/v1/search", {"lang": "persian"}, "lang"),
    ("/v1/search", {"source": "Not A Source"}, "source"), ("/v1/search", {"deleted": "maybe"}, "deleted"),
    ("/v1/search", {"q": "   "}, "q"), ("/v1/search", {"q": "x" * 1001}, "q"), ("/v1/search", {"cursor": "abc"}, "cursor"),
    ("/v1/search", {"hashtag": "a\x01b"}, "hashtag"), ("/v1/search", {"start": "0001-01-01T00:00:00Z"}, "start"),
    ("/v1/aggregations/timeline", {"interval": "fortnight"}, "interval"),
    ("/v1/aggregations/timeline", {"tz": "Mars/Olympus"}, "tz"),
    ("/v1/aggregations/timeline", {"interval": "minute", "start": "2000-01-01", "end": "2026-01-01"}, "buckets"),
    ("/v1/aggregations/top/colours", {}, "field"), ("/v1/aggregations/top/hashtags", {"size": 1001}, "size"),
    ("/v1/trends", {"window": "3w"}, "window"), ("/v1/trends", {"window": "0d"}, "window"),
    ("/v1/trends", {"baseline": 13}, "baseline"), ("/v1/trends", {"field": "emoji"}, "field"),
    ("/v1/trends", {"start": "2026-01-01"}, "until"), ("/v1/trends", {"window": "9999d"}, "window"),
    ("/v1/records/not a key", {}, "key"), ("/v1/threads/x:1", {"limit": 0}, "limit"),
    ("/v1/authors/someone", {"interval": "minute"}, "interval"),
    ("/v1/networks/friendship", {}, "network"), ("/v1/networks/reply", {"format": "pdf"}, "format"),
    ("/v1/exports/records", {"format": "xml"}, "format"), ("/v1/exports/records", {"fields": "password"}, "fields"),
    ("/v1/exports/records", {"limit": 1_000_001}, "limit"), ("/v1/exports/records", {"order": "random"}, "order"),
]


@pytest.mark.parametrize(("path", "params", "named"), BAD, ids=[f"{p}-{'-'.join(q)}" for p, q, _ in BAD])
def test_a_bad_parameter_is_a_400_that_names_it(api, world, path: str, params: dict, named: str) -> None:
    resp = api.get(path, params=params, headers=auth(world))
    assert resp.status_code in (400, 404) if path.startswith("/v1/records/not") else resp.status_code == 400, resp.text
    body = resp.json()
    assert set(body) == {"error", "message"} and named in body["message"], body
    assert "Traceback" not in resp.text and 'File "' not in resp.text


def test_missing_unknown_malformed_and_revoked_keys_are_401(api, world) -> None:
    from crawl_assets.api.access import KeyStore

    assert api.get("/v1/search").status_code == 401
    assert api.get("/v1/search", headers={"Authorization": "Bearer nope"}).status_code == 401
    fake = world.keys["demo"][:-4] + "AAAA"
    assert api.get("/v1/search", headers={"Authorization": f"Bearer {fake}"}).status_code == 401
    assert api.get("/v1/search", headers={"X-API-Key": world.keys["demo"]}).status_code == 200
    store = KeyStore(world.keys_url)
    row, key = store.create("demo", "to revoke")
    assert api.get("/v1/search", headers={"Authorization": f"Bearer {key}"}).status_code == 200
    assert store.revoke(row.key_id)
    resp = api.get("/v1/search", headers={"Authorization": f"Bearer {key}"})
    assert resp.status_code == 401 and resp.headers["WWW-Authenticate"] == "Bearer"
    store.close()


def test_a_key_in_the_url_is_refused(api, world) -> None:
    resp = api.get("/v1/search", params={"api_key": world.keys["demo"]}, headers=auth(world))
    assert resp.status_code == 400 and "Authorization header" in resp.json()["message"]


def test_the_rate_limit_answers_429_with_retry_after_per_key(world) -> None:
    with make_client(world, rate_per_minute=30) as client:  # a burst of 5, then one every 2 s
        codes = [client.get("/v1/aggregations/counts", headers=auth(world)).status_code for _ in range(8)]
        assert codes[:5] == [200] * 5 and 429 in codes[5:]
        limited = client.get("/v1/aggregations/counts", headers=auth(world))
        assert limited.status_code == 429 and int(limited.headers["Retry-After"]) >= 1
        assert client.get("/v1/aggregations/counts", headers=auth(world, "rival")).status_code == 200, "per key"


def test_failed_logins_are_rate_limited_per_client_address(world) -> None:
    from fastapi.testclient import TestClient

    wrong = {"Authorization": "Bearer cak_000000000000_" + "A" * 43}
    with make_client(world) as client:  # 30 failures a minute per address: a burst of 5, then one every 2 s
        codes = [client.get("/v1/search", headers=wrong).status_code for _ in range(8)]
        assert codes[:5] == [401] * 5 and codes[-1] == 429, codes
        blocked = client.get("/v1/search", headers=auth(world))
        assert blocked.status_code == 429 and blocked.json()["error"] == "too_many_failures", blocked.text
        assert int(blocked.headers["Retry-After"]) >= 1, "no key is checked from that address meanwhile"
        elsewhere = TestClient(client.app, raise_server_exceptions=False, client=("203.0.113.7", 40000))
        assert elsewhere.get("/v1/search", headers=auth(world)).status_code == 200, "per client address"
        assert elsewhere.get("/v1/search", headers=wrong).status_code == 401


def test_concurrent_streams_per_key_are_bounded(world) -> None:
    with make_client(world, streams_per_key=1) as client:
        state = client.app.state.api
        assert state.streams.acquire("held")  # a stream of another key does not count
        with client.stream("GET", "/v1/exports/records", params={"format": "jsonl"}, headers=auth(world)) as first:
            assert first.status_code == 200
            second = client.get("/v1/exports/records", params={"format": "csv"}, headers=auth(world))
            assert second.status_code == 429 and second.json()["error"] == "too_many_streams"
            first.read()
        assert client.get("/v1/exports/records", params={"limit": 5}, headers=auth(world)).status_code == 200


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("path", ["/v1/search", "/v1/aggregations/counts", "/v1/records/x:9001", "/v1/threads/x:9001",
                                  "/v1/authors/analyst_a", "/v1/trends", "/v1/networks/reply", "/v1/exports/records"])
def test_an_unreachable_index_is_a_503_with_retry_after(world, path: str) -> None:
    dead = Elasticsearch(f"http://127.0.0.1:{_closed_port()}", max_retries=0, request_timeout=5)
    with make_client(world, es=dead) as client:
        resp = client.get(path, headers=auth(world))
    assert resp.status_code == 503 and resp.headers["Retry-After"] == "10", resp.text
    assert resp.json()["error"] == "index_unavailable" and "Traceback" not in resp.text


@pytest.mark.parametrize("status", [429, 503, 500])
def test_an_overloaded_or_failing_node_is_a_503(world, status: int) -> None:
    with FaultProxy(world.url) as proxy, resource(proxy.url, max_retries=0).get_client() as es:
        proxy.faults.fail_requests(10, status, path="_search")
        with make_client(world, es=es) as client:
            resp = client.get("/v1/search", params={"q": "خبر"}, headers=auth(world))
    assert resp.status_code == 503 and "Retry-After" in resp.headers and "injected" not in resp.text


def test_an_unexpected_error_is_a_500_with_an_incident_id_and_no_trace(world, caplog) -> None:
    # A collaborator that is not a client at all: every query fails with an AttributeError inside the app.
    with make_client(world, es=object()) as client:  # type: ignore[arg-type]
        resp = client.get("/v1/aggregations/counts", headers=auth(world))
    assert resp.status_code == 500 and "incident" in resp.json()["message"]
    assert "AttributeError" not in resp.text and "Traceback" not in resp.text
    incident = resp.json()["message"].split("incident ")[1].split(")")[0]
    assert any(incident in r.getMessage() and r.exc_info for r in caplog.records), "the server log has the details"
