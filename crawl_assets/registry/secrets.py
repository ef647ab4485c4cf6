"""Refuse values that look like credentials, so a registry file can be shared and committed.

The registry holds *references* to credentials by name; the secrets themselves live in environment
variables read by resources. These patterns catch the usual ways a secret is pasted by mistake.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from crawl_assets.core.display import shown

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
