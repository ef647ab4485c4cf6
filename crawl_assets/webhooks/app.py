"""The webhook receiver: a small ASGI (Starlette) app that verifies, lands and counts pushed events.

``POST /hooks/{platform}/{source_key}`` (``intercom`` or ``discourse``; the key is the registry's
``{tenant}.{platform}.{name}``): the source must be registered for that platform; the body must carry
a valid signature made with *that source's tenant's* secret
(``CRAWL_<PLATFORM>_WEBHOOK_SECRET[__TENANT[__NAME]]``, ``NAME`` = the entry's ``credential``); then it is
written to the lake's landing area and answered ``202``. Anything else is refused (401 unsigned or
badly signed, 404 unknown source, 413 too large, 400 not JSON) and counted by outcome; ``GET /metrics``
shows the counters (Prometheus text), ``GET /healthz`` says it is up. Nothing about a secret or a
signature value is ever logged.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from crawl_assets.lake import Lake
from crawl_assets.lake.landing import land_event
from crawl_assets.registry import Registry, RegistryFileError, SourceEntry, load_registry
from crawl_assets.sources.tenant_secrets import MissingCredential, pick_secret, secrets_from_env
from crawl_assets.webhooks.signatures import SCHEMES, verify

log = logging.getLogger("crawl_assets.webhooks")
MAX_BODY_BYTES = 1 << 20


@dataclass
class ReceiverState:
    """Counters by (platform, outcome) and a registry reloaded when its file changes."""

    registry_path: Path
    lake: Lake
    environ: Mapping[str, str]
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    _registry: Registry | None = None
    _mtime: float = -1.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, platform: str, outcome: str) -> None:
        with self._lock:
            self.counts[(platform, outcome)] += 1

    def entry(self, key: str) -> SourceEntry | None:
        try:
            mtime = self.registry_path.stat().st_mtime
        except FileNotFoundError:
            return None
        if mtime != self._mtime or self._registry is None:
            try:
                self._registry, self._mtime = load_registry(self.registry_path), mtime
            except RegistryFileError:
                return None
        return self._registry.by_key().get(key)

    def secret(self, platform: str, entry: SourceEntry) -> str | None:
        base = SCHEMES[platform].secret_base
        try:
            return pick_secret(secrets_from_env(base, self.environ, resolve=True), base, entry.tenant, entry.credential)
        except MissingCredential:
            return None


def _refuse(state: ReceiverState, platform: str, outcome: str, status: int, message: str) -> Response:
    state.count(platform, outcome)
    log.warning("webhook refused: platform=%s outcome=%s status=%s", platform, outcome, status)
    return JSONResponse({"error": outcome, "message": message}, status_code=status)


async def receive(request: Request) -> Response:
    state: ReceiverState = request.app.state.receiver
    platform = request.path_params["platform"]
    key = request.path_params["source"]
    scheme = SCHEMES.get(platform)
    if scheme is None:
        return _refuse(state, "unknown", "unknown_platform", 404, f"no webhooks for platform {platform!r}")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:  # refuse before reading it
        return _refuse(state, platform, "too_large", 413, f"body over {MAX_BODY_BYTES} bytes")
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        return _refuse(state, platform, "too_large", 413, f"body over {MAX_BODY_BYTES} bytes")
    entry = state.entry(key)
    if entry is None or entry.platform != platform:
        return _refuse(state, platform, "unknown_source", 404, f"no {platform} source {key!r} is registered")
    signature = request.headers.get(scheme.header)
    if not signature:
        return _refuse(state, platform, "unsigned", 401, f"missing {scheme.header}")
    secret = state.secret(platform, entry)
    if secret is None:
        return _refuse(state, platform, "no_secret", 401, "no webhook secret is configured for this source's tenant")
    if not verify(scheme, body, signature, secret):
        return _refuse(state, platform, "bad_signature", 401, "signature does not match the body")
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _refuse(state, platform, "invalid_json", 400, "body is not JSON")
    topic = request.headers.get(scheme.topic_header, "") if scheme.topic_header else ""
    if not topic and isinstance(parsed, dict):
        topic = str(parsed.get("topic") or "")
    delivery = request.headers.get(scheme.delivery_header, "") if scheme.delivery_header else ""
    if not delivery and isinstance(parsed, dict):
        delivery = str(parsed.get("id") or "")
    event = land_event(state.lake, tenant=entry.tenant, platform=platform, source=entry.key, body=body,
                       topic=topic, delivery=delivery)
    state.count(platform, "accepted")
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


def create_app(*, registry_path: str | os.PathLike[str], lake_root: str,
               environ: Mapping[str, str] | None = None) -> Starlette:
    """The receiver app; ``environ`` holds the webhook secrets (default: the process environment)."""
    app = Starlette(routes=[
        Route("/hooks/{platform}/{source}", receive, methods=["POST"]),
        Route("/hooks/{platform}/{source}", head_ok, methods=["HEAD"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
    ])
    app.state.receiver = ReceiverState(Path(registry_path), Lake(lake_root), os.environ if environ is None else environ)
    return app
