"""Which Telegram failures end a source for good, which wait, and which are worth another try.

Telethon raises its own RPC error classes (built from Telegram's error message); this module is the one
place that sorts them, so the sync engine and the Dagster glue never guess from error strings.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

CLASSES = ("PERMANENT", "FLOOD", "NETWORK")  # module attributes: tuples of exception classes


def _proxy_errors() -> tuple[type[BaseException], ...]:
    """python-socks' own errors (a refused proxy login, a proxy that cannot reach Telegram): Telethon maps
    only some of them onto ``ConnectionError``."""
    try:
        from python_socks import ProxyConnectionError, ProxyError, ProxyTimeoutError
    except ImportError:  # without python-socks no SOCKS/HTTP proxy is ever used (the client refuses one)
        return ()
    return (ProxyError, ProxyTimeoutError, ProxyConnectionError)


@functools.cache
def _classified() -> dict[str, tuple[type[BaseException], ...]]:
    """The failures by what they mean. Telethon (~37 MiB with its TL types) is imported when a failure is
    first sorted, not when the definitions load: only a Telegram step needs it."""
    from telethon import errors

    return {
        # The source cannot be read with this account until a human acts (not retried, the source is paused).
        "PERMANENT": (
            errors.ChannelPrivateError,
            errors.ChannelInvalidError,
            errors.ChannelBannedError,
            errors.ChannelPublicGroupNaError,
            errors.ChatForbiddenError,
            errors.ChatIdInvalidError,
            errors.ChatAdminRequiredError,
            errors.UsernameNotOccupiedError,
            errors.UsernameInvalidError,
            errors.PeerIdInvalidError,
            errors.InviteHashExpiredError,
            errors.InviteHashInvalidError,
            errors.UserBannedInChannelError,
            # the account itself: its session is gone or the user is banned
            errors.AuthKeyUnregisteredError,
            errors.AuthKeyDuplicatedError,
            errors.AuthKeyInvalidError,
            errors.SessionRevokedError,
            errors.SessionExpiredError,
            errors.UserDeactivatedError,
            errors.UserDeactivatedBanError,
            errors.PhoneNumberBannedError,
            errors.TakeoutInitDelayError,
        ),
        # Server-given waits: Telethon exposes ``e.seconds``.
        "FLOOD": (
            errors.FloodWaitError,
            errors.FloodPremiumWaitError,
            errors.SlowModeWaitError,
        ),
        # Worth retrying after a pause: the connection (or the proxy in front of it) or Telegram's side failed.
        "NETWORK": (
            *_proxy_errors(),
            ConnectionError,
            TimeoutError,
            asyncio.TimeoutError,
            OSError,
            errors.ServerError,
            errors.TimedOutError,
            errors.RpcCallFailError,
        ),
    }


def __getattr__(name: str) -> Any:
    """``PERMANENT``, ``FLOOD``, ``NETWORK``: tuples of exception classes, built on first use."""
    if name in CLASSES:
        return _classified()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class SourceGone(Exception):
    """A permanent failure of one source (or of its account); ``reason`` is safe to show and store."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class ProxyFailed(SourceGone):
    """The account's proxy did not let it reach Telegram (refused, unreachable, wrong password or secret)
    after the in-place retries: its sources are paused until the proxy is fixed."""


class LongFloodWait(Exception):
    """Telegram asked for a wait longer than the in-place threshold: give the run slot back and come later."""

    def __init__(self, seconds: int, request: str, message: str | None = None):
        super().__init__(message or f"Telegram asked to wait {seconds}s before {request}")
        self.seconds = seconds
        self.request = request


class AccountBusy(Exception):
    """Another run holds this account; retry later rather than open a second connection with it."""

    def __init__(self, credential: str, seconds: int):
        super().__init__(f"Telegram account {credential!r} is in use by another run")
        self.seconds = seconds


def describe(exc: BaseException) -> str:
    """A short reason naming the error class and Telegram's message (never request arguments)."""
    text = str(exc).split(" (caused by", 1)[0].strip() or getattr(exc, "message", "")
    return f"{type(exc).__name__}: {text}"[:300]


def permanent_reason(exc: BaseException) -> str | None:
    """The reason to pause the source for, when ``exc`` (or what caused it) is permanent, else None.

    Telethon turns ``USERNAME_NOT_OCCUPIED`` during ``get_entity`` into a ``ValueError`` whose cause is
    the RPC error, and raises a plain ``ValueError`` when no entity matches at all: both are permanent.
    """
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, SourceGone):
            return seen.reason
        if isinstance(seen, _classified()["PERMANENT"]):
            return describe(seen)
        seen = seen.__cause__
    if isinstance(exc, ValueError) and ("Cannot find any entity" in str(exc) or "No user has" in str(exc)):
        return f"not found: {exc}"[:300]
    return None
