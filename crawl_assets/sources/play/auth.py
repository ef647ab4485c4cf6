"""Google service-account access tokens by the OAuth 2.0 JWT bearer flow (RFC 7523), for the Play
Developer API: sign a short-lived assertion with the account's private key, trade it at the account's
``token_uri`` for an access token, reuse that until shortly before it expires.

Written here rather than pulling ``google-auth``: it is ~60 lines on PyJWT + cryptography (already
installed) and lets tests point ``token_uri`` at the local stand-in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jwt
import orjson

from crawl_assets.sdk.errors import PermanentError, TransientError
from crawl_assets.sdk.http import BodyTooLarge, read_capped

SCOPE = "https://www.googleapis.com/auth/androidpublisher"
GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token"
TOKEN_RESPONSE_BYTES = 64 << 10  # a token answer is a few hundred bytes
REFRESH_MARGIN_SECONDS = 120


@dataclass(frozen=True)
class ServiceAccount:
    client_email: str
    private_key: str
    private_key_id: str
    token_uri: str

    @classmethod
    def parse(cls, value: str) -> "ServiceAccount":
        """From the key file's JSON text, or a path to it. Errors never quote the content."""
        text = value.strip()
        if not text.startswith("{"):
            path = Path(text).expanduser()
            if not path.is_file():
                raise ValueError("the service-account setting is neither JSON nor the path of a key file")
            text = path.read_text()
        try:
            data: Any = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise ValueError("the service-account key is not valid JSON") from None
        missing = [f for f in ("client_email", "private_key") if not isinstance(data.get(f), str) or not data.get(f)]
        if missing:
            raise ValueError(f"the service-account key lacks {', '.join(missing)}")
        return cls(data["client_email"], data["private_key"], str(data.get("private_key_id") or ""),
                   str(data.get("token_uri") or DEFAULT_TOKEN_URI))


class TokenSource:
    """Access tokens of one service account, refreshed when near expiry or after a 401."""

    def __init__(self, account: ServiceAccount, *, token_uri: str = "", timeout_seconds: float = 30.0,
                 clock: Callable[[], float] = time.time):
        self.account = account
        self.token_uri = token_uri or account.token_uri
        self.clock = clock
        self.timeout_seconds = timeout_seconds
        self._token = ""
        self._expires = 0.0
        self.exchanges = 0

    def assertion(self) -> str:
        now = int(self.clock())
        claims = {"iss": self.account.client_email, "scope": SCOPE, "aud": self.token_uri, "iat": now, "exp": now + 3600}
        headers = {"kid": self.account.private_key_id} if self.account.private_key_id else None
        try:
            return jwt.encode(claims, self.account.private_key, algorithm="RS256", headers=headers)
        except (ValueError, TypeError) as exc:
            raise PermanentError(f"service account {self.account.client_email}: private key unusable ({type(exc).__name__})") from None

    def headers(self, refresh: bool = False) -> Mapping[str, str]:
        """The Authorization header, exchanging a new assertion when needed."""
        if refresh or not self._token or self.clock() >= self._expires - REFRESH_MARGIN_SECONDS:
            self._exchange()
        return {"Authorization": f"Bearer {self._token}"}

    def _exchange(self) -> None:
        self.exchanges += 1
        try:
            with httpx.stream("POST", self.token_uri, data={"grant_type": GRANT, "assertion": self.assertion()},
                              timeout=self.timeout_seconds) as resp:
                raw = read_capped(resp, TOKEN_RESPONSE_BYTES)
        except httpx.HTTPError as exc:
            raise TransientError(f"token endpoint: {type(exc).__name__}", endpoint="token") from None
        except BodyTooLarge as exc:
            raise TransientError(f"token endpoint: {exc}", endpoint="token") from None
        if resp.status_code >= 500 or resp.status_code == 429:
            raise TransientError(f"token endpoint: HTTP {resp.status_code}", endpoint="token", status=resp.status_code)
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = {}
        if resp.status_code != 200 or not isinstance(body, dict) or not body.get("access_token"):
            reason = body.get("error_description") or body.get("error") if isinstance(body, dict) else ""
            raise PermanentError(f"service account {self.account.client_email} refused by the token endpoint: "
                                 f"HTTP {resp.status_code} {reason or ''}".strip(), endpoint="token", status=resp.status_code)
        self._token = str(body["access_token"])
        self._expires = self.clock() + float(body.get("expires_in") or 3600)
