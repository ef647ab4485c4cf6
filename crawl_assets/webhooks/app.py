"""The webhook receiver: a small ASGI (Starlette) app that verifies, lands and counts pushed events.

``POST /hooks/{platform}/{source_key}`` (``intercom`` or ``discourse``; the key is the registry's
``{tenant}.{platform}.{name}``): the body must carry a valid signature made with *that source's tenant's*
secret (``CRAWL_<PLATFORM>_WEBHOOK_SECRET[__TENANT[__NAME]]``, ``NAME`` = the entry's ``credential``); then
it is written to the lake's landing area and answered ``202``. Senders are not trusted:

- the body is streamed with a hard cap (``max_body_bytes``), Content-Length or not: at most the cap is
  ever held, and a request without a signature header is refused before its body is read;
- an unknown source, a source of another platform, a missing secret and a bad signature get one and the
  same answer (401 ``unauthorized``), so unsigned requests learn nothing about which sources exist;
- the signature is checked against the secrets of the tenant the source key names before the registry is
  asked, so a request none of them signed costs no registry read;
- a delivery is landed once: a replay or retry of one already landed (its signed id, or the hash of its
  body when the platform signs no id) is answered 200 ``duplicate``; a delivery whose signed creation time
  is outside ``max_age_seconds`` (Intercom's ``created_at``) is refused as ``stale``;
- the registry is read in a worker thread (never on the event loop), one reload at a time: a file when it
  changed (its size and mtime are checked on each request), a remote registry (S3, Postgres) at most once
  per ``registry_ttl`` seconds, and then only if its version changed (a conditional read).

Refusals are counted by outcome (``GET /metrics``, Prometheus text) and logged with their precise reason;
nothing about a secret or a signature value is ever logged. ``GET /healthz`` says it is up.
"""

from __future__ import annotations

import hmac
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from crawl_assets import settings
from crawl_assets.core.bodies import read_capped
from crawl_assets.core.private import owner_only
from crawl_assets.lake import Lake
from crawl_assets.lake.landing import claim_delivery, land_event, release_delivery
from crawl_assets.core.names import env_part
from crawl_assets.registry import RegistryFileError, SourceEntry
from crawl_assets.registry.store import registry_view
from crawl_assets.sdk.tenant_secrets import (MissingCredential, TenantSecret, pick_secret, plain,
                                                 secrets_from_env)
from crawl_assets.webhooks.signatures import SCHEMES, Scheme, delivery_key, sign, signed_time, verify

log = logging.getLogger("crawl_assets.webhooks")
MAX_BODY_BYTES = 1 << 20
MAX_AGE_SECONDS = 24 * 3600.0
REGISTRY_TTL_SECONDS = 5.0
CLOCK_SKEW_SECONDS = 300.0
_UNAUTHORIZED = {"error": "unauthorized", "message": "missing or invalid signature"}


@dataclass
class ReceiverState:
    """Counters by (platform, outcome), the secrets (read once) and the registry's entries (cached)."""

    registry_path: Path | str  # a file or a remote location (settings.registry_location)
    lake: Lake
    environ: Mapping[str, str]
    max_body_bytes: int = MAX_BODY_BYTES
    max_age_seconds: float = MAX_AGE_SECONDS
    clock: Callable[[], float] = time.time
    registry_ttl: float = REGISTRY_TTL_SECONDS
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    _secrets: dict[str, list[TenantSecret]] = field(default_factory=dict)
    _entries: tuple[float, dict[str, SourceEntry]] | None = None  # (when read, entries by key) of a remote registry
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _reload: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._secrets = {s.secret_base: secrets_from_env(s.secret_base, self.environ, resolve=True)
                         for s in SCHEMES.values()}

    def count(self, platform: str, outcome: str) -> None:
        with self._lock:
            self.counts[(platform, outcome)] += 1

    def tenant_secrets(self, scheme: Scheme, key: str) -> list[str]:
        """Every secret of the tenant the source key names, whatever the credential (no registry read)."""
        tenant = env_part(key.split(".", 1)[0])
        return [value for s in self._secrets[scheme.secret_base] if env_part(s.tenant) == tenant and (value := plain(s.value))]

    def _fresh(self) -> dict[str, SourceEntry] | None:
        held = self._entries
        if held is None or not settings.is_remote(self.registry_path) or not 0 <= self.clock() - held[0] < self.registry_ttl:
            return None
        return held[1]

    def entries(self) -> dict[str, SourceEntry]:
        """The registry's entries by key (blocking: call it in a worker thread)."""
        by_key = self._fresh()
        if by_key is not None:
            return by_key
        with self._reload:  # one reload at a time; the others then find it cached
            by_key = self._fresh()
            if by_key is None:
                _, by_key = registry_view(self.registry_path)
                self._entries = (self.clock(), by_key)
        return by_key

    def lookup(self, scheme: Scheme, key: str) -> tuple[SourceEntry | None, str | None]:
        """The source and its tenant's secret (blocking: call it in a worker thread)."""
        try:
            entry = self.entries().get(key)
        except (RegistryFileError, OSError):
            return None, None
        if entry is None or entry.platform != scheme.platform:
            return None, None
        try:
            secret = pick_secret(self._secrets[scheme.secret_base], scheme.secret_base, entry.tenant, entry.credential)
        except MissingCredential:
            return entry, None
        return entry, secret


def _refuse(state: ReceiverState, platform: str, outcome: str, status: int, body: dict[str, str],
            reason: str = "") -> Response:
    state.count(platform, outcome)
    log.warning("webhook refused: platform=%s outcome=%s reason=%s status=%s", platform, outcome, reason or outcome, status)
    return JSONResponse(body, status_code=status)


def _unauthorized(state: ReceiverState, platform: str, reason: str) -> Response:
    return _refuse(state, platform, "unauthorized", 401, _UNAUTHORIZED, reason)


async def receive(request: Request) -> Response:
    state: ReceiverState = request.app.state.receiver
    platform = request.path_params["platform"]
    key = request.path_params["source"]
    scheme = SCHEMES.get(platform)
    if scheme is None:
        return _refuse(state, "unknown", "unknown_platform", 404,
                       {"error": "unknown_platform", "message": f"no webhooks for platform {platform!r}"})
    too_large = {"error": "too_large", "message": f"body over {state.max_body_bytes} bytes"}
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > state.max_body_bytes:  # refuse before reading it
        return _refuse(state, platform, "too_large", 413, too_large)
    signature = request.headers.get(scheme.header)
    if not signature:
        return _unauthorized(state, platform, "unsigned")
    try:
        body = await read_capped(request.stream(), state.max_body_bytes)
    except ClientDisconnect:
        return _refuse(state, platform, "disconnected", 400, {"error": "disconnected", "message": "body not received"})
    if body is None:
        return _refuse(state, platform, "too_large", 413, too_large)
    candidates = state.tenant_secrets(scheme, key)
    if not any([verify(scheme, body, signature, secret) for secret in candidates]):  # each checked: same work
        if not candidates:
            hmac.compare_digest(sign(scheme, body, "no secret: same work as a real check"), signature)
        return _unauthorized(state, platform, "bad_signature")
    entry, secret = await run_in_threadpool(state.lookup, scheme, key)
    if entry is None or secret is None:
        return _unauthorized(state, platform, "unknown_source" if entry is None else "no_secret")
    if not verify(scheme, body, signature, secret):  # signed by another credential of the tenant
        return _unauthorized(state, platform, "bad_signature")
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _refuse(state, platform, "invalid_json", 400, {"error": "invalid_json", "message": "body is not JSON"})
    sent = signed_time(scheme, parsed)
    now = state.clock()
    if sent is not None and not now - state.max_age_seconds <= sent <= now + CLOCK_SKEW_SECONDS:
        return _refuse(state, platform, "stale", 400,
                       {"error": "stale", "message": f"delivery created outside the last {state.max_age_seconds:.0f} s"})
    return await run_in_threadpool(_land, state, scheme, entry, request.headers, body, parsed)


def _land(state: ReceiverState, scheme: Scheme, entry: SourceEntry, headers: Mapping[str, str], body: bytes,
          parsed: object) -> Response:
    where = {"tenant": entry.tenant, "platform": scheme.platform, "source": entry.key}
    delivery = delivery_key(scheme, body, parsed)
    if not claim_delivery(state.lake, key=delivery, **where):
        state.count(scheme.platform, "duplicate")
        return JSONResponse({"duplicate": True}, status_code=200)
    topic = headers.get(scheme.topic_header, "") if scheme.topic_header else ""
    if not topic and isinstance(parsed, dict):
        topic = str(parsed.get("topic") or "")
    delivery_id = headers.get(scheme.delivery_header, "") if scheme.delivery_header else ""
    if not delivery_id and isinstance(parsed, dict):
        delivery_id = str(parsed.get("id") or "")
    try:
        event = land_event(state.lake, body=body, topic=topic[:200], delivery=delivery_id[:200], **where)
    except BaseException:
        release_delivery(state.lake, key=delivery, **where)
        raise
    state.count(scheme.platform, "accepted")
    return JSONResponse({"accepted": event.event_id}, status_code=202)


async def head_ok(request: Request) -> Response:
    """Intercom checks a webhook URL with a HEAD request before saving it."""
    return Response(status_code=200)


async def metrics(request: Request) -> Response:
    state: ReceiverState = request.app.state.receiver
    lines = ["# TYPE crawl_webhook_requests_total counter"]
    for (platform, outcome), n in sorted(state.counts.items()):
        lines.append(f'crawl_webhook_requests_total{{platform="{platform}",outcome="{outcome}"}} {n}')
    return PlainTextResponse("\n".join(lines) + "\n")


async def healthz(request: Request) -> Response:
    return JSONResponse({"ok": True})


def create_app(*, registry_path: str | os.PathLike[str], lake_root: str, environ: Mapping[str, str],
               max_body_bytes: int = MAX_BODY_BYTES, max_age_seconds: float = MAX_AGE_SECONDS,
               clock: Callable[[], float] = time.time, registry_ttl: float = REGISTRY_TTL_SECONDS) -> Starlette:
    """The receiver app; ``environ`` holds the webhook secrets (``crawl-assets webhooks serve`` passes the process
    environment, through ``crawl_assets.settings``)."""
    owner_only()  # the landed deliveries: 0600
    app = Starlette(routes=[
        Route("/hooks/{platform}/{source}", receive, methods=["POST"]),
        Route("/hooks/{platform}/{source}", head_ok, methods=["HEAD"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
    ])
    app.state.receiver = ReceiverState(settings.registry_location(registry_path), Lake(lake_root), environ,
                                       max_body_bytes=max_body_bytes, max_age_seconds=max_age_seconds, clock=clock,
                                       registry_ttl=registry_ttl)
    return app
