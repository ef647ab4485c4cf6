"""pytest fixtures: one real Elasticsearch node per session, or the cluster ``CRAWL_TEST_ES_URL`` names.

* ``es_url`` (session): the cluster's URL. The real node starts the first time a test asks for it.
  Without Java or Maven the tests that need it are skipped with a one-line reason; with
  ``CRAWL_TEST_REQUIRE_REAL_ES=1`` (``.ci/run`` sets it) that skip is an error instead.
* ``es_cluster``: the same cluster, wiped of ``crawl-*`` indices and templates before the test, with a
  client and the ``CRAWL_ES_*`` variables a CLI or Dagster run needs to reach it.
* ``fault_proxy``: a ``FaultProxy`` in front of it (see ``proxy.py``).
* ``es_node``: the local ``RealNode`` (None on an external cluster), whose snapshot folder lets a session
  fixture index a world once and each test restore it (``EsCluster.snapshot`` / ``restore``) instead of
  indexing it again.

Own cluster: ``CRAWL_TEST_ES_URL=https://host:9200`` plus ``CRAWL_TEST_ES_API_KEY`` or
``CRAWL_TEST_ES_USERNAME``/``CRAWL_TEST_ES_PASSWORD`` and ``CRAWL_TEST_ES_CA_CERTS``. The tests delete and
create ``crawl-*`` indices and index templates there: use a cluster that holds nothing else of that name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import pytest
from elasticsearch import Elasticsearch

from crawl_assets.orchestration.resources.elasticsearch import ElasticsearchResource
from crawl_assets_tests.es_node.distribution import Unavailable
from crawl_assets_tests.es_node.inspect import restore, snapshot, wipe
from crawl_assets_tests.es_node.node import NodeStartError, RealNode
from crawl_assets_tests.es_node.proxy import FaultProxy

T = TypeVar("T")

CREDENTIALS = ("API_KEY", "USERNAME", "PASSWORD", "CA_CERTS")


def external_url() -> str:
    return os.environ.get("CRAWL_TEST_ES_URL", "").rstrip("/")


def required() -> bool:
    return os.environ.get("CRAWL_TEST_REQUIRE_REAL_ES", "") not in ("", "0", "false", "no")


def credentials_env() -> dict[str, str]:
    """``CRAWL_ES_*`` credentials for the test cluster (empty for the local node)."""
    return {f"CRAWL_ES_{name}": os.environ[f"CRAWL_TEST_ES_{name}"] for name in CREDENTIALS
            if os.environ.get(f"CRAWL_TEST_ES_{name}")}


def resource(url: str, **overrides) -> ElasticsearchResource:
    env = credentials_env()
    fields = dict(hosts=[url], api_key=env.get("CRAWL_ES_API_KEY", ""), username=env.get("CRAWL_ES_USERNAME", ""),
                  password=env.get("CRAWL_ES_PASSWORD", ""), ca_certs=env.get("CRAWL_ES_CA_CERTS", ""),
                  request_timeout=60)
    fields.update(overrides)
    return ElasticsearchResource(**fields)


@dataclass
class EsCluster:
    url: str
    client: Elasticsearch
    node: RealNode | None = None  # the local node; None on an external cluster

    def env(self, url: str | None = None) -> dict[str, str]:
        """What a CLI or a Dagster run in a subprocess needs: ``CRAWL_ES_URL`` and the credentials."""
        return {"CRAWL_ES_URL": url or self.url, **credentials_env()}

    def resource(self, url: str | None = None, **overrides) -> ElasticsearchResource:
        return resource(url or self.url, **overrides)

    def wipe(self) -> None:
        wipe(self.client)

    @property
    def can_snapshot(self) -> bool:
        return self.node is not None and self.node.snapshot_dir is not None

    def snapshot(self, name: str) -> None:
        """Keep every ``crawl-*`` index, alias and index template as snapshot ``name``."""
        assert self.node is not None and self.node.snapshot_dir is not None, "snapshots need the local node"
        snapshot(self.client, self.node.snapshot_dir, name)

    def restore(self, name: str) -> None:
        """Wipe ``crawl-*`` and bring back what snapshot ``name`` kept."""
        assert self.node is not None and self.node.snapshot_dir is not None, "snapshots need the local node"
        restore(self.client, self.node.snapshot_dir, name)


def start_or_skip(start: Callable[[], T], what: str = "node") -> T:
    """``start()``'s result; without Java/Maven/the artifact a skip (an error under ``CRAWL_TEST_REQUIRE_REAL_ES``),
    and a node that did not come up a test error with its log tail."""
    try:
        return start()
    except Unavailable as exc:
        if required():
            pytest.fail(f"CRAWL_TEST_REQUIRE_REAL_ES is set but no real Elasticsearch {what}: {exc}", pytrace=False)
        pytest.skip(f"no real Elasticsearch {what}: {exc}")
    except NodeStartError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def es_node() -> Iterator[RealNode | None]:
    if external_url():
        yield None
        return
    node = start_or_skip(RealNode().start)
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture(scope="session")
def es_url(es_node: RealNode | None) -> str:
    return es_node.url if es_node is not None else external_url()


@pytest.fixture
def es_cluster(es_url: str, es_node: RealNode | None) -> Iterator[EsCluster]:
    with resource(es_url).get_client() as client:
        wipe(client)
        yield EsCluster(es_url, client, es_node)


@pytest.fixture
def fault_proxy(es_url: str) -> Iterator[FaultProxy]:
    with FaultProxy(es_url) as proxy:
        yield proxy
