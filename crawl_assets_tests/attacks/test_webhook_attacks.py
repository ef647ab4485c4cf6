"""Attacks by webhook senders (issue 15, item 5): huge bodies, replays, probing which sources exist, a registry
reload that stalls every other request, and (issue 30, item 8) unsigned requests that each cost a read of a
remote registry."""

from __future__ import annotations

import asyncio
import os
import select
import socket
import threading
import time
import uuid

import httpx
import orjson

from crawl_assets.lake import Lake
from crawl_assets.lake.landing import landed_events
from crawl_assets.webhooks.app import create_app
from crawl_assets.webhooks.signatures import SCHEMES, sign
from crawl_assets_tests.webhooks.conftest import REGISTRY, SECRETS, receiver, serve  # noqa: F401 (fixture)

INTERCOM = "/hooks/intercom/acme.intercom.support"
ACME = SECRETS["CRAWL_INTERCOM_WEBHOOK_SECRET__ACME__MAIN"]
CAP = 1 << 20


def _notification(**extra) -> dict:
    return {"type": "notification_event", "id": "notif_42", "topic": "conversation.user.replied", "app_id": "wsa",
            "created_at": int(time.time()), "delivery_attempts": 1, "data": {"item": {"type": "conversation"}}, **extra}


def _signed(body: bytes, secret: str = ACME) -> dict[str, str]:
    return {"X-Hub-Signature": sign(SCHEMES["intercom"], body, secret), "Content-Type": "application/json"}


def _asgi_post(app, path: str, headers: dict[str, str], chunks: int, chunk_size: int = 64 * 1024) -> tuple[int, int]:
    """POST a body of ``chunks`` chunks straight into the ASGI app, no Content-Length (like chunked transfer);
    returns (status, bytes the app pulled from the body before answering)."""
    pulled = 0
    sent: list[dict] = []

    async def receive() -> dict:
        nonlocal pulled
        if pulled >= chunks * chunk_size:
            return {"type": "http.request", "body": b"", "more_body": False}
        pulled += chunk_size
        return {"type": "http.request", "body": b"x" * chunk_size, "more_body": True}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
    asyncio.run(app(scope, receive, send))
    return next(m["status"] for m in sent if m["type"] == "http.response.start"), pulled


def test_a_body_is_never_read_past_the_cap_with_or_without_content_length(tmp_path):
    registry = tmp_path / "sources.yaml"
    registry.write_text(REGISTRY)
    app = create_app(registry_path=registry, lake_root=str(tmp_path / "lake"), environ=SECRETS)  # cap: 1 MiB
    status, pulled = _asgi_post(app, INTERCOM, {"X-Hub-Signature": "sha1=" + "0" * 40}, chunks=64)  # 4 MiB, no length
    assert status == 413 and pulled <= CAP + 64 * 1024, f"read {pulled} bytes of a body over the cap"
    status, pulled = _asgi_post(app, INTERCOM, {}, chunks=64)  # unsigned: refused before the body is read
    assert status == 401 and pulled == 0
    status, pulled = _asgi_post(app, INTERCOM, {"X-Hub-Signature": "sha1=00", "Content-Length": str(300 << 20)}, chunks=64)
    assert status == 413 and pulled == 0


def test_a_huge_chunked_body_over_a_real_socket_is_cut_off(tmp_path):
    registry = tmp_path / "sources.yaml"
    registry.write_text(REGISTRY)
    with serve(registry, tmp_path / "lake", SECRETS) as url:
        host, port = url.removeprefix("http://").split(":")
        total, sent, answer = 64 << 20, 0, b""
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(f"POST {INTERCOM} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                         f"X-Hub-Signature: sha1={'0' * 40}\r\n\r\n".encode())
            chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
            try:
                while sent < total and not answer:
                    if select.select([sock], [], [], 0)[0]:
                        answer = sock.recv(4096)
                        break
                    sock.sendall(chunk)
                    sent += 0x10000
            except OSError:  # the receiver closed the connection mid-upload
                pass
            sock.settimeout(10)
            answer = answer or sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:80]
    assert sent < total // 2, f"the receiver took {sent} bytes of a {total}-byte body"


def test_a_replayed_or_retried_delivery_lands_once(receiver):
    url, lake_root, _ = receiver
    body = orjson.dumps(_notification())
    assert httpx.post(url + INTERCOM, content=body, headers=_signed(body)).status_code == 202
    again = httpx.post(url + INTERCOM, content=body, headers=_signed(body))
    assert again.status_code == 200 and again.json() == {"duplicate": True}
    retry = orjson.dumps(_notification(delivery_attempts=2))  # Intercom's retry: same id, another attempt count
    assert httpx.post(url + INTERCOM, content=retry, headers=_signed(retry)).json() == {"duplicate": True}
    # Discourse signs only the body: a replay with another (unsigned) event id header is still the same delivery
    post = orjson.dumps({"post": {"id": 181, "topic_id": 1003, "cooked": "<p>hi</p>"}})
    secret = SECRETS["CRAWL_DISCOURSE_WEBHOOK_SECRET__ACME"]
    for event_id in ("42", "43"):
        httpx.post(url + "/hooks/discourse/acme.discourse.forum", content=post, headers={
            "X-Discourse-Event-Signature": sign(SCHEMES["discourse"], post, secret), "X-Discourse-Event-Id": event_id})
    assert len(landed_events(Lake(lake_root))) == 2


def test_a_signed_delivery_outside_the_time_window_is_refused(receiver):
    url, lake_root, _ = receiver
    for created in (int(time.time()) - 3 * 24 * 3600, int(time.time()) + 3600):
        body = orjson.dumps(_notification(id=f"notif_{created}", created_at=created))
        resp = httpx.post(url + INTERCOM, content=body, headers=_signed(body))
        assert resp.status_code == 400 and resp.json()["error"] == "stale"
    assert landed_events(Lake(lake_root)) == []


def test_unsigned_requests_cannot_tell_which_sources_exist(receiver):
    url, _, _ = receiver
    body = orjson.dumps(_notification())
    for headers in ({}, {"X-Hub-Signature": "sha1=" + "1" * 40}):
        known = httpx.post(url + INTERCOM, content=body, headers=headers)
        unknown = httpx.post(url + "/hooks/intercom/acme.intercom.nosuchsource", content=body, headers=headers)
        assert (known.status_code, known.content) == (unknown.status_code, unknown.content) == (known.status_code, known.content)
        assert known.status_code == 401


def test_a_registry_reload_does_not_stall_the_event_loop(tmp_path):
    """The registry is a FIFO here: reading it blocks until the test writes it. Before, the reload ran on the
    event loop, so /healthz hung behind it; now it runs in a worker thread."""
    registry = tmp_path / "sources.yaml"
    os.mkfifo(registry)
    body = orjson.dumps(_notification())
    result: dict = {}
    with serve(registry, tmp_path / "lake", SECRETS) as url:
        pending = threading.Thread(target=lambda: result.update(
            resp=httpx.post(url + INTERCOM, content=body, headers=_signed(body), timeout=60)))
        pending.start()
        try:
            health = httpx.get(url + "/healthz", timeout=10)  # raises (ReadTimeout) if the loop is blocked
            assert health.json() == {"ok": True}
        finally:
            with open(registry, "w") as fifo:  # let the reload finish
                fifo.write(REGISTRY)
            pending.join(60)
    assert result["resp"].status_code == 202


def test_a_remote_registry_is_read_once_per_lifetime_and_never_for_an_unsigned_request(s3_env, tmp_path, monkeypatch):
    """The registry in S3 behind a counting proxy (issue 30, item 8): requests none of the tenant's secrets signed
    read nothing, however many and however spread in time; signed ones read it once per lifetime (then a
    conditional read), whatever their number."""
    from crawl_assets.webhooks.app import REGISTRY_TTL_SECONDS
    from crawl_assets_tests.es_node.proxy import FaultProxy
    from crawl_assets_tests.shared.s3_server import BUCKET

    where = f"registry-{uuid.uuid4().hex[:10]}/sources.yaml"
    s3_env.client().put_object(Bucket=BUCKET, Key=where, Body=REGISTRY.encode())
    now = [time.time()]
    with FaultProxy(s3_env.url) as s3:
        monkeypatch.setenv("AWS_ENDPOINT_URL", s3.url)
        with serve(f"s3://{BUCKET}/{where}", tmp_path / "lake", SECRETS, clock=lambda: now[0]) as url:
            for i in range(40):
                body = orjson.dumps(_notification(id=f"forged_{i}"))
                forged = {"X-Hub-Signature": sign(SCHEMES["intercom"], body, "a guess")}
                for path in (INTERCOM, "/hooks/intercom/acme.intercom.nosuchsource", "/hooks/intercom/nobody.intercom.x"):
                    assert httpx.post(url + path, content=body, headers=forged).status_code == 401
                now[0] += REGISTRY_TTL_SECONDS / 2  # their lifetimes pass: still nothing is read
            assert s3.stats["requests"] == 0, "an unauthenticated request read the registry"
            for i in range(20):
                body = orjson.dumps(_notification(id=f"signed_{i}"))
                assert httpx.post(url + INTERCOM, content=body, headers=_signed(body)).status_code == 202
            assert s3.stats["requests"] == 1, "20 signed requests within a lifetime: one read"
            now[0] += REGISTRY_TTL_SECONDS + 1
            for i in range(20):
                body = orjson.dumps(_notification(id=f"later_{i}"))
                assert httpx.post(url + INTERCOM, content=body, headers=_signed(body)).status_code == 202
            assert s3.stats["requests"] == 2, "the next lifetime: one conditional read"
