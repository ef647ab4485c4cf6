"""Fake credentials in the shapes real ones have, built at run time so that no credential-shaped
literal sits in the source (secret scanners stay quiet; nothing here was ever a real secret)."""

from __future__ import annotations

import base64

FAKE_API_HASH = "0123456789abcdef" * 2  # a Telegram api_hash: 32 hex digits
FAKE_X_BEARER = "A" * 21 + "MLheAAAAAAA0%2BuSeid%2BULvsea4JtiGRiSDSJSI%3DEUifi"  # an X app-only bearer token
FAKE_X_BEARER_LONG = FAKE_X_BEARER + "RBkKG5E2XzMDjRfl76ZC9Ub0wnz4XsNiRVBChTYbJcE3F"
FAKE_INTERCOM_TOKEN = base64.b64encode(b"tok:" + b"abcdef_123456789_abcdefghijk").decode()
FAKE_HTTP_BEARER = "Bearer " + "abcdefghijklmnopqrstuvwxyz012345"
FAKE_HEX64_KEY = "9f86d081884c7d65" * 4  # a 64-hex API key (many SaaS keys, webhook secrets)
FAKE_GITLAB_TOKEN = "gl" + "pat-" + "xY7_abcdefGHIJ12345klm"
FAKE_AWS_KEY_ID = "AK" + "IA" + "IOSFODNN7EXAMPLQ"
# a JSON Web Token (header.payload.signature, base64url; header {"alg":"HS256","typ":"JWT"}), made up
FAKE_JWT = "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJ" + "zdWIiOiIxMjM0IiwibmFtZSI6InRlc3QifQ" + ".c2lnbmF0dXJlX21hZGVfdXA"
FAKE_JWT_SHORT = "eyJ" + "hbGciOiJub25lIn0" + ".eyJ" + "zdWIiOiIxIn0" + "."  # {"alg":"none"}, {"sub":"1"}: short, unsigned
FAKE_URL_API_KEY = "https://forum.example.org/latest.json?" + "api_" + "key=3f9c2a71b8e4d605"
