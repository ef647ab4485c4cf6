"""Webhook signature checks: each platform signs the raw body with a secret shared at setup.

- Intercom: ``X-Hub-Signature: sha1=<hex HMAC-SHA1 of the body, key = the app's client secret>``
- Discourse: ``X-Discourse-Event-Signature: sha256=<hex HMAC-SHA256 of the body, key = the webhook secret>``

Comparisons are constant-time; a missing or malformed header is simply "not signed".
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass


@dataclass(frozen=True)
class Scheme:
    """How one platform signs, names and dates its deliveries.

    Only what the signature covers can be trusted against replays: Intercom's notification ``id`` (the same
    on every retry of one notification) and ``created_at`` are inside the signed body; Discourse signs the
    body only (its ``X-Discourse-Event-Id`` header could be changed by whoever replays a captured delivery),
    so a Discourse delivery is recognised by the hash of its body and has no time to check.
    """

    platform: str
    header: str  # lower-case request header
    prefix: str  # "sha1=" / "sha256="
    digest: str  # hashlib name
    secret_base: str  # environment variable base of the per-tenant secrets
    topic_header: str = ""
    delivery_header: str = ""
    signed_id_field: str = ""  # body field identifying a delivery (else: the body's hash)
    signed_time_field: str = ""  # body field with the delivery's creation time (epoch seconds), if any


SCHEMES: dict[str, Scheme] = {
    "intercom": Scheme("intercom", "x-hub-signature", "sha1=", "sha1", "CRAWL_INTERCOM_WEBHOOK_SECRET",
                       signed_id_field="id", signed_time_field="created_at"),
    "discourse": Scheme("discourse", "x-discourse-event-signature", "sha256=", "sha256", "CRAWL_DISCOURSE_WEBHOOK_SECRET",
                        topic_header="x-discourse-event", delivery_header="x-discourse-event-id"),
}


def delivery_key(scheme: Scheme, body: bytes, parsed: object) -> str:
    """What identifies a delivery, from signed content only: the signed id field, else the body's hash."""
    if scheme.signed_id_field and isinstance(parsed, dict):
        value = parsed.get(scheme.signed_id_field)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return hashlib.sha256(f"id:{value}".encode()).hexdigest()[:40]
    return hashlib.sha256(b"body:" + body).hexdigest()[:40]


def signed_time(scheme: Scheme, parsed: object) -> float | None:
    """The delivery's signed creation time (epoch seconds), when the platform sends one."""
    if not scheme.signed_time_field or not isinstance(parsed, dict):
        return None
    value = parsed.get(scheme.signed_time_field)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def sign(scheme: Scheme, body: bytes, secret: str) -> str:
    """The header value a sender computes (used by tests and by ``crawl-assets webhooks`` docs)."""
    return scheme.prefix + hmac.new(secret.encode(), body, scheme.digest).hexdigest()


def verify(scheme: Scheme, body: bytes, header_value: str | None, secret: str) -> bool:
    """True only for a well-formed header matching the body's HMAC under ``secret``."""
    if not header_value or not secret or not header_value.startswith(scheme.prefix):
        return False
    return hmac.compare_digest(sign(scheme, body, secret), header_value.strip())


