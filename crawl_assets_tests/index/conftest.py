"""Fixtures: the protocol-level ES test server by default; a real cluster when ``CRAWL_TEST_ES_URL`` is set.

Each test gets its own tenant, so on a real cluster tests never see each other's documents; the tenant's
indices are deleted afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from elasticsearch import Elasticsearch

from crawl_assets.index.bootstrap import tenant_indices
from crawl_assets.index.naming import FAMILIES
from crawl_assets.resources.elasticsearch import ElasticsearchResource
from crawl_assets_tests.es_server import ESTestServer

REAL_URL = os.environ.get("CRAWL_TEST_ES_URL", "")


@dataclass
class EsTarget:
    client: Elasticsearch
    server: ESTestServer | None
    tenant: str
    url: str

    def require_server(self) -> ESTestServer:
        """Fault injection exists only on the test server."""
        if self.server is None:
            pytest.skip("fault injection needs the protocol test server (CRAWL_TEST_ES_URL is set)")
        return self.server


def _resource(url: str) -> ElasticsearchResource:
    return ElasticsearchResource(
        hosts=[url], api_key=os.environ.get("CRAWL_TEST_ES_API_KEY", ""),
        username=os.environ.get("CRAWL_TEST_ES_USERNAME", ""), password=os.environ.get("CRAWL_TEST_ES_PASSWORD", ""),
        ca_certs=os.environ.get("CRAWL_TEST_ES_CA_CERTS", ""), request_timeout=10, max_retries=0,
    )


@pytest.fixture(scope="session")
def _server() -> Iterator[ESTestServer | None]:
    if REAL_URL:
        yield None
        return
    with ESTestServer() as server:
        yield server


@pytest.fixture
def es(_server: ESTestServer | None) -> Iterator[EsTarget]:
    tenant = f"t{uuid.uuid4().hex[:10]}"
    url = REAL_URL or _server.url  # type: ignore[union-attr]
    if _server is not None:
        _server.reset()
    client = _resource(url).get_client()
    try:
        yield EsTarget(client, _server, tenant, url)
    finally:
        if _server is not None:
            _server.faults.clear()
        for family in FAMILIES:
            names = list(tenant_indices(client, family, tenant))
            if names:
                client.indices.delete(index=",".join(names), ignore_unavailable=True)
        client.close()
