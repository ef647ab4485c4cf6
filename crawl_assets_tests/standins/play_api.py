"""A Google Play Developer API stand-in, including the OAuth token endpoint.

``POST /token`` takes the JWT bearer grant (RFC 7523): it checks the RS256 signature against the
service account's public key, ``aud`` (this endpoint), ``scope`` and ``exp``, and answers
``{access_token, expires_in, token_type}`` or ``400 invalid_grant``. ``GET /androidpublisher/v3/applications
/{package}/reviews`` speaks ``reviews.list``: only reviews modified in the last ``window_days``, newest
first, ``maxResults`` (≤ 100), ``tokenPagination.nextPageToken``; Google error bodies for 401
(unknown/expired token), 403 (the account has no access to the app), 404 (unknown package), 400 (bad
page token). ``expire_tokens()`` invalidates issued tokens so a client must refresh.
"""

from __future__ import annotations

import base64
import functools
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import parse_qs

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from crawl_assets_tests.standins.http_base import Refuse, Reply, Request, StandIn

SCOPE = "https://www.googleapis.com/auth/androidpublisher"


@functools.cache
def _key(index: int) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def service_account(email: str, token_uri: str, key_index: int = 0) -> dict[str, str]:
    """A service-account key file's content (a fresh test key; never a real one)."""
    pem = _key(key_index).private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()).decode()
    return {"type": "service_account", "project_id": "test", "private_key_id": f"kid{key_index}", "private_key": pem,
            "client_email": email, "client_id": "1", "token_uri": token_uri}


def make_review(review_id: str, modified: datetime, *, rating: int = 4, text: str = "\tWorks well", lang: str = "en",
                reply: str | None = None, version: str = "2.3.1") -> dict[str, Any]:
    seconds = int(modified.timestamp())
    comments: list[dict[str, Any]] = [{"userComment": {
        "text": text, "lastModified": {"seconds": str(seconds), "nanos": 0}, "starRating": rating,
        "reviewerLanguage": lang, "device": "a52q", "androidOsVersion": 33, "appVersionCode": 231,
        "appVersionName": version, "thumbsUpCount": rating % 3, "thumbsDownCount": 0,
        "deviceMetadata": {"productName": "a52q (Galaxy A52)", "manufacturer": "Samsung", "ramMb": 6144}}}]
    if reply:
        comments.append({"developerComment": {"text": reply, "lastModified": {"seconds": str(seconds + 600), "nanos": 0}}})
    return {"reviewId": review_id, "authorName": "کاربر" if lang.startswith("fa") else "A Google user", "comments": comments}


def _google_error(status: int, message: str, state: str) -> Refuse:
    return Refuse(status, {"error": {"code": status, "message": message, "status": state}})


@dataclass
class PlayServer(StandIn):
    """``apps``: package → reviews; ``grants``: service-account email → packages it may read."""

    apps: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    grants: dict[str, set[str]] = field(default_factory=dict)
    window_days: float = 7.0
    now: Any = None  # callable returning the server's "now" (default: real time)

    def __post_init__(self) -> None:
        super().__init__()
        self.public_keys: dict[str, Any] = {}
        self.tokens: dict[str, str] = {}  # access token -> email
        self.assertions: list[dict[str, Any]] = []

    def register(self, email: str, key_index: int = 0) -> dict[str, str]:
        """Accept this account's key; returns the key file content with ``token_uri`` pointing here."""
        self.public_keys[email] = _key(key_index).public_key()
        return service_account(email, f"{self.url}/token", key_index)

    def expire_tokens(self) -> None:
        with self.lock:
            self.tokens.clear()

    def endpoint_of(self, req: Request) -> str:
        return "token" if req.path == "/token" else "reviews.list"

    def _now(self) -> datetime:
        return self.now() if self.now else datetime.now(timezone.utc)

    def route(self, req: Request) -> Reply:
        if req.path == "/token" and req.method == "POST":
            return self._token(parse_qs(req.body.decode()))
        parts = req.path.strip("/").split("/")
        if len(parts) != 5 or parts[:3] != ["androidpublisher", "v3", "applications"] or parts[4] != "reviews":
            raise _google_error(404, "Not found", "NOT_FOUND")
        email = self.tokens.get(req.headers.get("authorization", "").removeprefix("Bearer "))
        if email is None:
            raise _google_error(401, "Request had invalid authentication credentials.", "UNAUTHENTICATED")
        package = parts[3]
        if package not in self.apps:
            raise _google_error(404, f"Package not found: {package}.", "NOT_FOUND")
        if package not in self.grants.get(email, set()):
            raise _google_error(403, "The current user has insufficient permissions to perform the requested operation.",
                                "PERMISSION_DENIED")
        return Reply(200, self._reviews(package, req))

    def _token(self, form: dict[str, list[str]]) -> Reply:
        if form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
            raise Refuse(400, {"error": "unsupported_grant_type", "error_description": "Invalid grant_type"})
        assertion = (form.get("assertion") or [""])[0]
        try:
            email = jwt.decode(assertion, options={"verify_signature": False})["iss"]
            claims = jwt.decode(assertion, self.public_keys[email], algorithms=["RS256"], audience=f"{self.url}/token")
        except (KeyError, jwt.PyJWTError):
            raise Refuse(400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}) from None
        if claims.get("scope") != SCOPE:
            raise Refuse(400, {"error": "invalid_scope", "error_description": "Invalid OAuth scope."})
        self.assertions.append(claims)
        token = "ya29." + secrets.token_urlsafe(24)
        self.tokens[token] = email
        return Reply(200, {"access_token": token, "expires_in": 3599, "token_type": "Bearer"})

    def _reviews(self, package: str, req: Request) -> dict[str, Any]:
        max_results = int(req.arg("maxResults") or 10)
        if not 1 <= max_results <= 100:
            raise _google_error(400, "maxResults must be between 1 and 100", "INVALID_ARGUMENT")
        since = (self._now() - timedelta(days=self.window_days)).timestamp()
        visible = [r for r in self.apps[package]
                   if int(r["comments"][0]["userComment"]["lastModified"]["seconds"]) >= since]
        visible.sort(key=lambda r: int(r["comments"][0]["userComment"]["lastModified"]["seconds"]), reverse=True)
        start = 0
        if req.arg("token"):
            try:
                start = int(base64.urlsafe_b64decode(req.arg("token") or "").decode())
            except ValueError:
                raise _google_error(400, "Invalid pagination token", "INVALID_ARGUMENT") from None
        page = visible[start:start + max_results]
        body: dict[str, Any] = {"reviews": page, "pageInfo": {"totalResults": len(visible), "resultPerPage": max_results,
                                                              "startIndex": start}}
        if start + max_results < len(visible):
            body["tokenPagination"] = {"nextPageToken": base64.urlsafe_b64encode(str(start + max_results).encode()).decode()}
        return body


def export_csv(rows: list[dict[str, str]], *, utf16: bool = True) -> bytes:
    """A Play Console review export (the Console writes UTF-16 with a BOM)."""
    import csv
    import io

    columns = ["Package Name", "App Version Code", "App Version Name", "Reviewer Language", "Device",
               "Review Submit Date and Time", "Review Submit Millis Since Epoch", "Review Last Update Date and Time",
               "Review Last Update Millis Since Epoch", "Star Rating", "Review Title", "Review Text",
               "Developer Reply Date and Time", "Developer Reply Millis Since Epoch", "Developer Reply Text", "Review Link"]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns)
    writer.writeheader()
    for row in rows:
        writer.writerow({c: row.get(c, "") for c in columns})
    return buf.getvalue().encode("utf-16" if utf16 else "utf-8")



