"""The app uvicorn runs (``crawl-assets api serve``): built from the environment in each worker process.

``CRAWL_ES_URL`` and its credentials (``index.client.client_settings_from_env``), the key store of the instance's
database, ``CRAWL_API_RATE`` (requests per minute per key) and ``CRAWL_API_ES_TIMEOUT`` (seconds).
The client retries a failed request once; a node still unreachable gives 503 with ``Retry-After``.
"""

from __future__ import annotations

import os

from fastapi import FastAPI

from crawl_assets.api.app import create_app
from crawl_assets.api.keys import KeyStore
from crawl_assets.index.client import build_client, client_settings_from_env


def check_settings() -> None:
    """Refuse bad settings before serving (credentials in CRAWL_ES_URL, ...)."""
    client_settings_from_env()


def app() -> FastAPI:
    timeout = float(os.environ.get("CRAWL_API_ES_TIMEOUT", "30"))
    client = build_client(**client_settings_from_env(), request_timeout=timeout, max_retries=1, retry_on_timeout=False)
    return create_app(client, KeyStore(), rate_per_minute=int(os.environ.get("CRAWL_API_RATE", "600")))
