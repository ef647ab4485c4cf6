"""One Telegram account's proxy: SOCKS5, HTTP CONNECT or MTProxy, parsed from its secret URL.

The whole URL is a secret (it holds the proxy's password or the MTProxy secret) and comes only from the
credential's environment variable (``CRAWL_TELEGRAM_PROXY[__TENANT[__NAME]]``, through the resource's
``EnvVar``). ``ProxySpec.shown`` is what may be printed, logged or stored: scheme, host and port only.
Telethon opens every connection of the client through it: the main one, those to other data centres
(media downloads) and reconnections. Plain Python; Telethon's connection classes load with the client.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

SCHEMES = {"socks5": "socks5", "socks5h": "socks5", "http": "http", "mtproxy": "mtproxy"}
DIRECT = ("direct", "none")  # an explicit "no proxy" that stops the fallback to the tenant's or operator's
_HOST = re.compile(r"[A-Za-z0-9.\-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]")


class ProxyConfigError(ValueError):
    """A proxy URL that cannot be used; the message never contains the URL's secret parts."""


@dataclass(frozen=True)
class ProxySpec:
    """A parsed proxy: ``kind`` is ``socks5``, ``http`` (CONNECT) or ``mtproxy``."""

    kind: str
    host: str
    port: int
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    secret: str | None = field(default=None, repr=False)  # MTProxy: 32 hex digits, "dd" + 32 for padded mode

    @property
    def shown(self) -> str:
        """Scheme, host and port: safe for logs, reasons and metadata."""
        return f"{self.kind}://{self.host}:{self.port}"

    def secrets(self) -> tuple[str, ...]:
        """The strings no message may contain (scrubbed from error texts before they are shown)."""
        return tuple(s for s in (self.password, self.secret, self.username) if s)

    def scrub(self, text: str) -> str:
        for value in sorted(self.secrets(), key=len, reverse=True):
            text = text.replace(value, "***")
        return text

    def telethon(self) -> dict[str, Any]:
        """``connection`` and ``proxy`` arguments for ``TelegramClient``."""
        if self.kind == "mtproxy":
            from telethon.network.connection import (
                ConnectionTcpMTProxyIntermediate,
                ConnectionTcpMTProxyRandomizedIntermediate,
            )

            padded = (self.secret or "").startswith("dd")
            connection = ConnectionTcpMTProxyRandomizedIntermediate if padded else ConnectionTcpMTProxyIntermediate
            return {"connection": connection, "proxy": (self.host, self.port, self.secret)}
        from telethon.network.connection import ConnectionTcpFull

        return {"connection": ConnectionTcpFull, "proxy": {
            "proxy_type": self.kind, "addr": self.host, "port": self.port, "rdns": True,
            "username": self.username, "password": self.password}}


def _secret(raw: str, where: str) -> str:
    """An MTProxy secret as lower-case hex: 16 bytes, or ``dd`` + 16 bytes (hex or URL-safe base64)."""
    text = raw.strip()
    try:
        data = bytes.fromhex(text)
    except ValueError:
        try:
            data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (binascii.Error, ValueError):
            raise ProxyConfigError(f"{where}: the MTProxy secret is neither hex nor base64") from None
    if len(data) == 17 and data[0] == 0xDD:
        return data.hex()
    if data[:1] == b"\xee":
        raise ProxyConfigError(f"{where}: fake-TLS MTProxy secrets (starting with ee) are not supported by "
                               "Telethon; ask the proxy's operator for a plain or dd secret")
    if len(data) != 16:
        raise ProxyConfigError(f"{where}: an MTProxy secret is 16 bytes (32 hex digits), optionally after dd")
    return data.hex()


def _port(value: Any, where: str) -> int:
    try:
        port = int(value)
    except (TypeError, ValueError):
        raise ProxyConfigError(f"{where}: the port is missing or not a number") from None
    if not 0 < port < 65536:
        raise ProxyConfigError(f"{where}: the port must be between 1 and 65535")
    return port


def _host(value: str | None, where: str) -> str:
    if not value or not _HOST.fullmatch(value):
        raise ProxyConfigError(f"{where}: the host is missing or not a host name or IP address")
    return value.strip("[]")


def parse_proxy(url: str, where: str = "the proxy") -> ProxySpec | None:
    """The proxy a URL names, or None for an empty value, ``direct`` or ``none``.

    ``socks5://[user:password@]host:port``, ``http://[user:password@]host:port`` (HTTP CONNECT),
    ``mtproxy://host:port?secret=<hex>`` and the links MTProxy operators hand out
    (``tg://proxy?server=..&port=..&secret=..``, ``https://t.me/proxy?...``). ``where`` names the setting in
    errors, which never repeat the URL.
    """
    text = (url or "").strip()
    if not text or text.lower() in DIRECT:
        return None
    try:
        parts = urlsplit(text)
        netloc_port = parts.port
    except ValueError:
        raise ProxyConfigError(f"{where}: not a proxy URL (scheme://host:port)") from None
    scheme = parts.scheme.lower()
    query = parse_qs(parts.query)
    share_link = (scheme == "tg" and parts.netloc.lower() == "proxy") or (
        scheme in ("https", "http") and (parts.hostname or "").lower() in ("t.me", "telegram.me")
        and parts.path.rstrip("/") == "/proxy")
    if share_link:
        server, port, secret = (query.get(k, [""])[0] for k in ("server", "port", "secret"))
        return ProxySpec("mtproxy", _host(server, where), _port(port, where), secret=_secret(secret, where))
    kind = SCHEMES.get(scheme)
    if kind is None:
        raise ProxyConfigError(f"{where}: unknown proxy scheme {scheme[:20]!r}; use socks5://, http:// (CONNECT) "
                               "or mtproxy:// (https proxies are not supported by Telethon)")
    host, port = _host(parts.hostname, where), _port(netloc_port, where)
    if kind == "mtproxy":
        secret = query.get("secret", [""])[0] or unquote(parts.username or "")
        if not secret:
            raise ProxyConfigError(f"{where}: an MTProxy needs its secret (mtproxy://host:port?secret=<hex>)")
        return ProxySpec("mtproxy", host, port, secret=_secret(secret, where))
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    if password and not username:
        raise ProxyConfigError(f"{where}: a proxy password needs a user name (scheme://user:password@host:port)")
    return ProxySpec(kind, host, port, username=username, password=password)
