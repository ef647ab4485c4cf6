"""Signed and unsigned webhook posts over a real socket: what is landed, what is refused and counted."""

from __future__ import annotations

import time

import httpx
import orjson

from crawl_assets.lake import Lake
from crawl_assets.lake.landing import landed_events, read_event
from crawl_assets.webhooks.signatures import SCHEMES, sign, verify
from crawl_assets_tests.standins.intercom_api import make_conversation
from crawl_assets_tests.webhooks.conftest import SECRETS

NOTIFICATION = {"type": "notification_event", "app_id": "wsa", "id": "notif_1", "topic": "conversation.user.replied",
                "data": {"type": "notification_event_data", "item": make_conversation(7, 1_780_000_000, 1_780_000_500)},
                "created_at": int(time.time())}  # signed: deliveries older than the receiver's window are refused


def _post(url: str, path: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(url + path, content=body, headers={"Content-Type": "application/json", **headers}, timeout=5)


def test_signature_scheme_matches_the_platforms_documented_hmacs():
    body = b'{"a":1}'
    assert sign(SCHEMES["intercom"], body, "s").startswith("sha1=") and len(sign(SCHEMES["intercom"], body, "s")) == 45
    assert sign(SCHEMES["discourse"], body, "s").startswith("sha256=")
    assert not verify(SCHEMES["intercom"], body, "sha1=" + "0" * 40, "s")
    assert not verify(SCHEMES["intercom"], body, sign(SCHEMES["discourse"], body, "s"), "s")


def test_signed_intercom_event_is_landed_as_received(receiver):
    url, lake_root, _ = receiver
    body = orjson.dumps(NOTIFICATION)
    sig = sign(SCHEMES["intercom"], body, SECRETS["CRAWL_INTERCOM_WEBHOOK_SECRET__ACME__MAIN"])
    resp = _post(url, "/hooks/intercom/acme.intercom.support", body, {"X-Hub-Signature": sig})
    assert resp.status_code == 202
    [event] = landed_events(Lake(lake_root))
    assert (event.tenant, event.platform, event.source) == ("acme", "intercom", "acme.intercom.support")
    assert event.path.startswith("landing/acme/intercom/acme.intercom.support/")
    stored = read_event(Lake(lake_root), event)
    assert stored["response"] == NOTIFICATION and stored["crawl"]["topic"] == "conversation.user.replied"
    assert resp.json()["accepted"] == event.event_id


def test_signed_discourse_event_is_landed_with_its_event_headers(receiver):
    url, lake_root, _ = receiver
    body = orjson.dumps({"post": {"id": 181, "topic_id": 1003, "cooked": "<p>hi</p>"}})
    headers = {"X-Discourse-Event-Signature": sign(SCHEMES["discourse"], body, SECRETS["CRAWL_DISCOURSE_WEBHOOK_SECRET__ACME"]),
               "X-Discourse-Event": "post_created", "X-Discourse-Event-Id": "42", "X-Discourse-Instance": "https://forum.acme.test"}
    assert _post(url, "/hooks/discourse/acme.discourse.forum", body, headers).status_code == 202
    [event] = landed_events(Lake(lake_root))
    crawl = read_event(Lake(lake_root), event)["crawl"]
    assert crawl["topic"] == "post_created" and crawl["delivery"] == "42"


def test_unsigned_badly_signed_and_foreign_requests_are_refused_and_counted(receiver):
    url, lake_root, _ = receiver
    body = orjson.dumps(NOTIFICATION)
    acme_secret = SECRETS["CRAWL_INTERCOM_WEBHOOK_SECRET__ACME__MAIN"]
    cases = [  # unsigned, badly signed, another tenant's secret, unknown source: one and the same answer
        ("/hooks/intercom/acme.intercom.support", {}),
        ("/hooks/intercom/acme.intercom.support", {"X-Hub-Signature": "sha1=" + "0" * 40}),
        ("/hooks/intercom/acme.intercom.support", {"X-Hub-Signature": sign(SCHEMES["intercom"], body + b" ", acme_secret)}),
        # acme's secret does not open globex's endpoint, though both name the credential "main"
        ("/hooks/intercom/globex.intercom.support", {"X-Hub-Signature": sign(SCHEMES["intercom"], body, acme_secret)}),
        ("/hooks/intercom/acme.intercom.nope", {"X-Hub-Signature": sign(SCHEMES["intercom"], body, acme_secret)}),
        ("/hooks/discourse/acme.intercom.support", {"X-Discourse-Event-Signature": "sha256=00"}),
    ]
    answers = set()
    for path, headers in cases:
        resp = _post(url, path, body, headers)
        answers.add((resp.status_code, resp.content))
    assert len(answers) == 1 and next(iter(answers))[0] == 401
    assert landed_events(Lake(lake_root)) == []
    metrics = httpx.get(url + "/metrics").text
    assert 'crawl_webhook_requests_total{platform="intercom",outcome="unauthorized"} 5' in metrics
    assert 'crawl_webhook_requests_total{platform="discourse",outcome="unauthorized"} 1' in metrics
    assert acme_secret not in metrics


def test_a_signed_body_that_is_not_json_is_refused(receiver):
    url, _, _ = receiver
    body = b"not json"
    sig = sign(SCHEMES["intercom"], body, SECRETS["CRAWL_INTERCOM_WEBHOOK_SECRET__ACME__MAIN"])
    assert _post(url, "/hooks/intercom/acme.intercom.support", body, {"X-Hub-Signature": sig}).status_code == 400
    assert httpx.head(url + "/hooks/intercom/acme.intercom.support").status_code == 200
    big = b"[" + b"1," * 600_000 + b"1]"
    assert _post(url, "/hooks/intercom/acme.intercom.support", big, {"X-Hub-Signature": sig}).status_code == 413
    assert httpx.get(url + "/healthz").json() == {"ok": True}


def test_cli_lists_the_serve_command():
    from click.testing import CliRunner

    from crawl_assets.cli.main import cli

    result = CliRunner().invoke(cli, ["webhooks", "serve", "--help"])
    assert result.exit_code == 0 and "/hooks/" in result.output and "--port" in result.output
