"""The app uvicorn runs (``crawl-assets api serve``): built from the environment in each worker process.

``CRAWL_ES_URL`` and its credentials (``index.client.client_settings_from_env``), the key store of the instance's
database, ``CRAWL_API_RATE`` (requests per minute per key), ``CRAWL_API_ES_TIMEOUT`` (seconds), the lake releases are
built from (``CRAWL_LAKE``) and ``CRAWL_API_RELEASE_MAX_RECORDS``.
The client retries a failed request once; a node still unreachable gives 503 with ``Retry-After``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

from fastapi import FastAPI

from crawl_assets.api.app import create_app
from crawl_assets.api.edge import holds_a_key, names_a_secret
from crawl_assets.api.access import KeyStore
from crawl_assets.core.private import owner_only
from crawl_assets.index.client import (async_transport_installed, build_async_client, build_client,
                                       client_settings_from_env)
from crawl_assets.lake import Lake
from crawl_assets.settings import Settings


_DELIMITERS = re.compile(r"([\s\"'&?;/,]+)")  # between a URL's parameters and path segments, a line's words


def _redacted_token(token: str) -> str:
    name, eq, value = token.partition("=")
    if eq and names_a_secret(name):
        return f"{name}=[redacted]"
    found = holds_a_key(value if eq else token)
    if found is None:
        return token
    redacted = f"cak_{found.group(1).lower()}_[redacted]"
    return f"{name}={redacted}" if eq else redacted


def redact(text: str) -> str:
    """``text`` with every API key (any case, percent-encoded or not) and every value of a key-like URL
    parameter (``Key=``, ``%6Bey=``, ``Access-Token=``...) replaced by ``[redacted]``; a key keeps its id.
    One linear pass over the text's words."""
    if "=" not in text and "%" not in text and "cak_" not in text.lower():
        return text
    return "".join(part if i % 2 else _redacted_token(part) for i, part in enumerate(_DELIMITERS.split(text)))


def _redacted_arg(arg: object) -> object:
    if arg is None or isinstance(arg, (bool, int, float)):
        return arg
    text = arg if isinstance(arg, str) else str(arg)
    clean = redact(text)
    return arg if clean == text else clean


class RedactKeys(logging.Filter):
    """Redacts a log record's message and each of its arguments in place (``redact``). The arguments keep their
    number and places: uvicorn's access formatter unpacks them (a record whose arguments were merged into its
    message broke that formatter, and the access line was lost)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redacted_arg(a) for a in record.args)
        elif isinstance(record.args, Mapping):
            record.args = {k: _redacted_arg(v) for k, v in record.args.items()}
        return True


def redact_logs() -> None:
    for name in ("uvicorn.access", "uvicorn.error", "uvicorn", "crawl_assets.api"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactKeys) for f in logger.filters):
            logger.addFilter(RedactKeys())


def check_settings() -> None:
    """Refuse bad settings before serving (credentials in CRAWL_ES_URL, ...)."""
    client_settings_from_env()


def app() -> FastAPI:
    owner_only()
    redact_logs()
    config = Settings.from_env()  # once per worker process
    settings = {**client_settings_from_env(), "request_timeout": config.api_es_timeout_seconds, "max_retries": 1,
                "retry_on_timeout": False}
    async_client = (lambda: build_async_client(**settings)) if async_transport_installed() else None
    return create_app(build_client(**settings), KeyStore(), rate_per_minute=config.api_rate_per_minute,
                      async_client=async_client, lake=Lake(config.lake_root),
                      release_max_records=config.api_release_max_records)
