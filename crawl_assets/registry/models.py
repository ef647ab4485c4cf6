"""The source registry entry: what a user declares to have a source collected, refusing values that look like
credentials, so a registry file can be shared and committed.

The registry holds *references* to credentials by name; the secrets themselves live in environment
variables read by resources. These patterns catch the usual ways a secret is pasted by mistake.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from crawl_assets.core import catalog, names
from crawl_assets.core.display import shown
from crawl_assets.core.catalog import EXPORT_FILE

# Each pattern runs on at most SCAN_LIMIT characters and is written so that it cannot backtrack: repeats are
# possessive (``++``, ``{n,}+``: never given back, safe because the next literal is outside the repeated class)
# or bounded (a private key's type: at most 40 characters tried from any start).
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("private key block", re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----")),
    ("X/Twitter bearer token", re.compile(r"AAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{20,}+")),
    ("bearer authorization header", re.compile(r"(?i)\bbearer\s++[A-Za-z0-9._~+/=-]{16,}+")),
    ("Telegram api_hash", re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")),
    ("Telethon StringSession", re.compile(r"(?<![A-Za-z0-9_-])1[A-Za-z0-9_=-]{200,}+")),
    ("Intercom access token", re.compile(r"\bdG9rO[A-Za-z0-9+/=]{20,}+")),
    ("Google service-account JSON", re.compile(r'"private_key_id"\s*+:')),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("Elasticsearch API key", re.compile(r"(?i)\bApiKey\s++[A-Za-z0-9+/=]{20,}+")),
    # ://user:password@ after a scheme's last character; the scheme was [a-z][a-z0-9+.-]*, tried from every
    # letter of a long word to its end: quadratic (a 40 KB identifier took 35 s). Now each "://" is one start.
    ("password in URL", re.compile(r"(?<=[A-Za-z0-9+.-])://[^/\s:@]++:[^/\s@]++@")),
    ("GitHub/Slack style token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|xox[abpr])_?+[A-Za-z0-9-]{20,}+")),
    ("GitHub fine-grained token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}+")),
    ("GitLab token", re.compile(r"\bgl(?:pat|dt|rt|ptt|oas)-[A-Za-z0-9_-]{20,}+")),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("64-hex API key", re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{64}(?![0-9A-Fa-f])")),
    ("API key in a URL", re.compile(
        r"(?i)[?&#;](?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|secret|client[_-]?secret|password|"
        r"passwd|pwd|sig|signature|key)=[^&#\s]{6,}+")),
    # header.payload[.signature], base64url; both JSON objects, so each starts with "eyJ" ('{"'); unsigned too
    ("JSON Web Token", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}+\.eyJ[A-Za-z0-9_-]{5,}+\.[A-Za-z0-9_-]*+")),
    ("Slack app / Stripe live key", re.compile(r"\b(?:xapp-|sk_live_|rk_live_)[A-Za-z0-9_-]{20,}+")),
]
# The most any pattern sees: a value is checked whole or refused as too long; a text to redact is cut first.
SCAN_LIMIT = 4096
# All of them in one pass: most values hold no secret, and one search costs less than eighteen
_ANY = re.compile("|".join(f"(?i:{p.pattern[4:]})" if p.pattern.startswith("(?i)") else f"(?:{p.pattern})"
                           for _, p in _PATTERNS))
REDACTED = "[redacted]"


def _entropy(value: str) -> float:
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _high_entropy(token: str) -> bool:
    if len(token) < 40 or _entropy(token) <= 4.3:
        return False
    classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
    return classes >= 3 and not token.startswith(("http://", "https://", "file:", "/"))


def redact_secrets(text: str, limit: int = 500) -> str:
    """``text`` with every part that looks like a secret replaced by ``[redacted]``, C0 control characters
    as spaces, bidi formatting escaped (``core.display.shown``), at most ``limit`` characters: safe to store and show (pause reasons, server error text).
    Only the first ``SCAN_LIMIT`` characters are read, less the word cut there (it could be part of a secret)."""
    text = str(text)
    if len(text) > SCAN_LIMIT:
        words = text[:SCAN_LIMIT - 6].rsplit(None, 1)
        text = (words[0] if len(words) == 2 else "") + " [cut]"
    text = "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text)
    for _, pattern in _PATTERNS:
        text = pattern.sub(REDACTED, text)
    text = " ".join(REDACTED if _high_entropy(token) else token for token in text.split(" "))
    return shown(text)[:limit]  # bidi formatting and C1 controls escaped: shown on terminals and in logs


def looks_like_secret(value: str) -> str | None:
    """Return why ``value`` looks like a secret, or None.

    Besides known formats, a long unbroken high-entropy token (no spaces, mixed classes) is refused:
    identifiers, handles and search queries are short or contain spaces. A value over ``SCAN_LIMIT``
    characters is not searched at all: it is refused as too long to check.
    """
    if len(value) > SCAN_LIMIT:
        return f"longer than {SCAN_LIMIT} characters, too long to check"
    if _ANY.search(value):
        for name, pattern in _PATTERNS:
            if pattern.search(value):
                return name
    if len(value) >= 40 and any(_high_entropy(token) for token in value.split()):
        return "long high-entropy token"
    return None


# Platforms, their kinds and export formats are declared by the source specs (crawl_assets/sources/*/spec.py).
PLATFORMS: tuple[str, ...] = catalog.platforms()
EXPORT_FORMATS: dict[str, tuple[str, ...]] = {p: s.export_formats for p, s in catalog.catalog().specs.items()}
MAX_VALUE_CHARS = 2000  # any text value of an entry (names, queries, paths); checked before any secret pattern


# Every kind some installed platform accepts (the specs' ``kinds``, then ``export_file``): an enum built from
# the catalog, so a platform declares a new kind in its spec and nothing here changes.
SourceKind = Enum("SourceKind", {k: k for k in dict.fromkeys((*catalog.catalog().kinds(), EXPORT_FILE))}, type=str)  # type: ignore[misc]


class SourceStatus(str, Enum):
    active = "active"
    paused = "paused"


class SyncPolicy(BaseModel):
    """How often and how deep a source is synced."""

    model_config = ConfigDict(extra="forbid")

    interval_minutes: int = Field(60, gt=0, le=60 * 24 * 30, description="Minimum time between syncs.")
    priority: int = Field(0, ge=-100, le=100, description="Higher is synced first when many are due.")
    history_horizon_days: int | None = Field(
        None, gt=0, description="How far back the historical backfill goes; None means everything."
    )
    refresh_window: int | None = Field(
        None, ge=0, le=10_000,
        description="Newest items re-read each sync for edits, deletions, counters; None means the platform's "
        "default (Telegram 200; X 0, because X bills every post read).",
    )

    def refresh_items(self, platform_default: int) -> int:
        """The refresh window to apply: the entry's own, else the platform's default."""
        return platform_default if self.refresh_window is None else self.refresh_window


class SourceEntry(BaseModel):
    """One registered source. Identity is (tenant, platform, name); ``key`` is its partition key."""

    model_config = ConfigDict(extra="forbid", use_enum_values=False)

    name: str = Field(description="Short slug, unique per tenant and platform.")
    tenant: str = "default"
    platform: str
    kind: SourceKind
    identifier: str = Field(min_length=1, max_length=MAX_VALUE_CHARS)
    policy: SyncPolicy = Field(default_factory=SyncPolicy)
    credential: str | None = Field(
        None, description="Name of a credential held by the platform's resource; never the secret."
    )
    status: SourceStatus = SourceStatus.active
    status_reason: str | None = None
    options: dict[str, str | int | float | bool | None] = Field(default_factory=dict)

    @field_validator("name", "tenant")
    @classmethod
    def _slug(cls, value: str, info: ValidationInfo) -> str:
        valid, rule = (names.is_tenant, names.TENANT_RULE) if info.field_name == "tenant" else (names.is_slug, names.SLUG_RULE)
        if not valid(value):
            raise ValueError(f"must be {rule}")
        return value

    @field_validator("platform")
    @classmethod
    def _platform(cls, value: str) -> str:
        if value not in PLATFORMS:
            raise ValueError(f"unknown platform {value!r}; expected one of {', '.join(PLATFORMS)}")
        return value

    @field_validator("credential")
    @classmethod
    def _credential(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if not names.is_credential(value) or looks_like_secret(value):
            raise ValueError(f"must be the *name* of a credential ({names.CREDENTIAL_RULE}), never a secret itself")
        return value

    @model_validator(mode="before")
    @classmethod
    def _no_secrets(cls, data: Any, info: ValidationInfo) -> Any:
        data = without_secret_reason(data)
        found = None if (info.context or {}).get("secrets_checked") else find_secret(data)
        if found:
            raise ValueError(f"field {found[0]!r}: {found[1]}")
        return data

    @field_validator("kind")
    @classmethod
    def _kind_fits(cls, value: SourceKind, info: ValidationInfo) -> SourceKind:
        platform = info.data.get("platform")
        if platform is None:  # the platform itself is invalid (reported on its own field)
            return value
        allowed = catalog.spec(platform).allowed_kinds()
        if value.value not in allowed:
            raise ValueError(f"kind {value.value!r} is not supported for {platform}; expected one of {', '.join(allowed)}")
        return value

    @field_validator("options")
    @classmethod
    def _typed_options(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        """A live source's options parse as its spec's ``options_model``: each error keeps its place
        (``options.<name>``), so the registry reports the option's own line."""
        platform, kind = info.data.get("platform"), info.data.get("kind")
        if platform is not None and kind is not None and kind is not SourceKind.export_file:
            model = catalog.spec(platform).options_model
            try:
                model.model_validate(value)
            except ValidationError as exc:  # raised from here, each error is reported under this field
                raise _unknown_options_named(exc, f"{platform} {kind.value} sources", tuple(model.model_fields)) from None
        return value

    @field_validator("options")
    @classmethod
    def _format_fits(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        platform, kind = info.data.get("platform"), info.data.get("kind")
        if platform is None or kind is not SourceKind.export_file:
            return value
        fmt = value.get("format") or EXPORT_FORMATS[platform][0]
        if fmt not in EXPORT_FORMATS[platform]:
            raise ValueError(
                f"format {fmt!r} is not an export format of {platform}; expected one of {', '.join(EXPORT_FORMATS[platform])}"
            )
        return value

    @property
    def key(self) -> str:
        """Partition key: stable, readable, no '/', never a secret (all parts are validated slugs)."""
        return f"{self.tenant}.{self.platform}.{self.name}"

    @property
    def typed_options(self) -> Any:
        """The options as the spec's model (``options_model``); ``ValueError`` names the bad option."""
        try:
            return catalog.spec(self.platform).options_model.model_validate(self.options)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise ValueError(f"options.{where}: {err['msg'].removeprefix('Value error, ')}") from None

    @property
    def export_format(self) -> str | None:
        if self.kind is not SourceKind.export_file:
            return None
        return str(self.options.get("format") or EXPORT_FORMATS[self.platform][0])

    @property
    def paused(self) -> bool:
        return self.status is SourceStatus.paused


def _unknown_options_named(exc: ValidationError, what: str, known: tuple[str, ...]) -> ValidationError:
    """The options model's errors, where an unknown option's also names the options there are (a typo shows)."""
    details: list[Any] = []
    for err in exc.errors():
        detail = {k: err[k] for k in ("type", "loc", "input", "ctx") if k in err}
        if err["type"] == "extra_forbidden":
            detail["type"] = PydanticCustomError("unknown_option", "unknown option {name} for {what}; known: {known}",
                                                 {"name": repr(err["loc"][-1]), "what": what, "known": ", ".join(known) or "none"})
        details.append(detail)
    return ValidationError.from_exception_data(exc.title, details)


def without_secret_reason(data: Any) -> Any:
    """An entry's ``status_reason`` is free text written by people and by automatic pauses (which may quote
    a server's error): it is redacted rather than refused, so no reason text can make the registry unreadable."""
    reason = data.get("status_reason") if isinstance(data, dict) else None
    if reason is None:
        return data
    return {**data, "status_reason": redact_secrets(str(reason))}


def find_secret(data: Any) -> tuple[str, str] | None:
    """First (field path, message) whose value is too long or looks like a secret, or None. Lengths are checked
    first: no pattern ever reads a value longer than ``MAX_VALUE_CHARS``."""
    values = [(field, value) for field, value in _walk(data) if isinstance(value, str)]
    for field, value in values:
        if len(value) > MAX_VALUE_CHARS:
            return field, f"longer than {MAX_VALUE_CHARS} characters"
    for field, value in values:
        reason = looks_like_secret(value)
        if reason:
            return field, (
                f"looks like a secret ({reason}); store secrets in environment variables "
                "and put only the credential's name in 'credential'"
            )
    return None


def _walk(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    if isinstance(data, dict):
        for k, v in data.items():
            out.extend(_walk(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out.extend(_walk(v, f"{prefix}[{i}]"))
    else:
        out.append((prefix, data))
    return out
