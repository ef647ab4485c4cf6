"""The app uvicorn runs (``crawl-assets api serve``): built from the environment in each worker process.

``CRAWL_ES_URL`` and its credentials (``index.client.client_settings_from_env``), the key store of the instance's
database, ``CRAWL_API_RATE`` (requests per minute per key) and ``CRAWL_API_ES_TIMEOUT`` (seconds).
The client retries a failed request once; a node still unreachable gives 503 with ``Retry-After``.
"""

from __future__ import annotations

import logging
import re

from fastapi import FastAPI

from crawl_assets.api.app import create_app
from crawl_assets.api.keys import KeyStore
from crawl_assets.core.private import owner_only
from crawl_assets.index.client import (async_transport_installed, build_async_client, build_client,
                                       client_settings_from_env)
from crawl_assets.settings import Settings


# A key anywhere in a logged line (a caller who put it in the URL: refused, but the access log saw the URL).
_KEY_IN_TEXT = re.compile(r"(cak_[0-9a-f]{12}_)[A-Za-z0-9_-]+")
_SECRET_PARAM = re.compile(r"((?:api_key|key|token|access_token)=)[^&\s\"]+")


class RedactKeys(logging.Filter):
    """Rewrites a log record so no API key secret (and no value of a key-like URL parameter) is printed."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = _SECRET_PARAM.sub(r"\1[redacted]", _KEY_IN_TEXT.sub(r"\1[redacted]", message))
        if redacted != message:
            record.msg, record.args = redacted, ()
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
                      async_client=async_client)
