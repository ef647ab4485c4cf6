"""Webhook signature checks: each platform signs the raw body with a secret shared at setup.

- Intercom: ``X-Hub-Signature: sha1=<hex HMAC-SHA1 of the body, key = the app's client secret>``
- Discourse: ``X-Discourse-Event-Signature: sha256=<hex HMAC-SHA256 of the body, key = the webhook secret>``

Comparisons are constant-time; a missing or malformed header is simply "not signed".
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass


@dataclass(frozen=True)
class Scheme:
    platform: str
    header: str  # lower-case request header
    prefix: str  # "sha1=" / "sha256="
    digest: str  # hashlib name
    secret_base: str  # environment variable base of the per-tenant secrets
    topic_header: str = ""
    delivery_header: str = ""


SCHEMES: dict[str, Scheme] = {
    "intercom": Scheme("intercom", "x-hub-signature", "sha1=", "sha1", "CRAWL_INTERCOM_WEBHOOK_SECRET"),
    "discourse": Scheme("discourse", "x-discourse-event-signature", "sha256=", "sha256", "CRAWL_DISCOURSE_WEBHOOK_SECRET",
                        topic_header="x-discourse-event", delivery_header="x-discourse-event-id"),
}


def sign(scheme: Scheme, body: bytes, secret: str) -> str:
    """The header value a sender computes (used by tests and by ``crawl-assets webhooks`` docs)."""
    return scheme.prefix + hmac.new(secret.encode(), body, scheme.digest).hexdigest()


def verify(scheme: Scheme, body: bytes, header_value: str | None, secret: str) -> bool:
    """True only for a well-formed header matching the body's HMAC under ``secret``."""
    if not header_value or not secret or not header_value.startswith(scheme.prefix):
        return False
    return hmac.compare_digest(sign(scheme, body, secret), header_value.strip())


