"""The webhook receiver served by uvicorn on a free port of 127.0.0.1 (a real socket), a registry with
two tenants' Intercom and Discourse sources, and per-tenant secrets."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from crawl_assets.webhooks.app import create_app
from crawl_assets_tests.served import served

REGISTRY = """sources:
  - {name: support, tenant: acme, platform: intercom, kind: workspace, identifier: wsa, credential: main}
  - {name: support, tenant: globex, platform: intercom, kind: workspace, identifier: wsg, credential: main}
  - {name: forum, tenant: acme, platform: discourse, kind: forum, identifier: "https://forum.acme.test"}
  - {name: old, tenant: acme, platform: intercom, kind: workspace, identifier: wso, status: paused, status_reason: test}
"""
SECRETS = {
    "CRAWL_INTERCOM_WEBHOOK_SECRET__ACME__MAIN": "acme-intercom-client-secret",
    "CRAWL_INTERCOM_WEBHOOK_SECRET__GLOBEX__MAIN": "globex-intercom-client-secret",
    "CRAWL_INTERCOM_WEBHOOK_SECRET__ACME": "acme-default-secret",
    "CRAWL_DISCOURSE_WEBHOOK_SECRET__ACME": "acme-discourse-secret",
}


@contextmanager
def serve(registry: Path, lake_root: Path | str, environ: Mapping[str, str], **options) -> Iterator[str]:  # noqa: ANN003
    """The receiver over a real socket on 127.0.0.1 (uvicorn in a thread); yields its base URL."""
    app = create_app(registry_path=registry, lake_root=str(lake_root), environ=dict(environ), **options)
    with served(app) as url:
        yield url


@pytest.fixture
def receiver(tmp_path):
    registry = tmp_path / "sources.yaml"
    registry.write_text(REGISTRY)
    lake_root = str(tmp_path / "lake")
    with serve(registry, lake_root, SECRETS) as url:
        yield url, lake_root, registry
