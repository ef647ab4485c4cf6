"""Fixtures of the index tests: the real Elasticsearch node of the session (or ``CRAWL_TEST_ES_URL``'s
cluster), wiped of ``crawl-*`` before each test, a tenant per test, and a fault proxy on demand."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field

import pytest
from elasticsearch import Elasticsearch

from crawl_assets_tests.es_node.fixtures import EsCluster, resource
from crawl_assets_tests.es_node.proxy import FaultProxy


@dataclass
class EsTarget:
    client: Elasticsearch
    tenant: str
    url: str
    cluster: EsCluster
    _stack: ExitStack = field(default_factory=ExitStack, repr=False)

    def proxied(self, **client_options) -> tuple[FaultProxy, Elasticsearch]:
        """A fault proxy in front of the node, and a client that goes through it (closed after the test)."""
        proxy = self._stack.enter_context(FaultProxy(self.url))
        client = self._stack.enter_context(resource(proxy.url, **client_options).get_client())
        return proxy, client


@pytest.fixture
def es(es_cluster: EsCluster) -> Iterator[EsTarget]:
    target = EsTarget(es_cluster.client, f"t{uuid.uuid4().hex[:10]}", es_cluster.url, es_cluster)
    with target._stack:
        yield target
