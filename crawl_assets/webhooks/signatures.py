"""Webhook signature checks: each platform signs the raw body with a secret shared at setup.

How is declared by the source specs that accept webhooks (``SourceSpec.webhook``, e.g. Intercom's
``X-Hub-Signature: sha1=<hex HMAC-SHA1 of the body>``, Discourse's ``X-Discourse-Event-Signature:
sha256=<hex HMAC-SHA256 of the body>``). Comparisons are constant-time; a missing or malformed header is
simply "not signed".
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from crawl_assets.core import catalog


@dataclass(frozen=True)
class Scheme:
    """How one platform signs, names and dates its deliveries (its ``WebhookSpec``), and where its secrets are.

    Only what the signature covers can be trusted against replays: a signed id field (Intercom's notification
    ``id``, the same on every retry) identifies a delivery, else the hash of its body (Discourse signs the body
    only: its event id header could be changed by whoever replays a captured delivery); a signed time field
    (Intercom's ``created_at``) bounds its age.
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
    ignored_topics: frozenset[str] = frozenset({"ping"})


def _schemes() -> dict[str, Scheme]:
    out = {}
    for platform, spec in catalog.catalog().specs.items():
        hook = spec.webhook
        if hook is not None:
            out[platform] = Scheme(platform, hook.header, hook.prefix, hook.digest,
                                   f"CRAWL_{platform.upper()}_{hook.secret}", hook.topic_header, hook.delivery_header,
                                   hook.signed_id_field, hook.signed_time_field, hook.ignored_topics)
    return out


SCHEMES: dict[str, Scheme] = _schemes()


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


