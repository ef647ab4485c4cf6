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
* Two server lines in one session (issue 32): the index, API and enrichment-join tests (``BOTH_LINES``, not the
  system tier) that use the node run twice, ``[es8]`` on the session's version and ``[es9]`` on
  ``CRAWL_TEST_ES9_VERSION`` (default 9.2.0, empty: off; it needs a JDK 21+). Every fixture built on the node
  (``es_line`` -> ``es_version`` -> ``es_node`` -> ``es_url`` -> worlds) follows the test's line; the nodes are
  kept by ``es_nodes``, one line running at a time per worker. ``tiers.py`` puts a line's tests on one worker,
  first, so a worker switches line once.

Own cluster: ``CRAWL_TEST_ES_URL=https://host:9200`` plus ``CRAWL_TEST_ES_API_KEY`` or
``CRAWL_TEST_ES_USERNAME``/``CRAWL_TEST_ES_PASSWORD`` and ``CRAWL_TEST_ES_CA_CERTS``. The tests delete and
create ``crawl-*`` indices and index templates there: use a cluster that holds nothing else of that name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import pytest
from elasticsearch import Elasticsearch

from crawl_assets.orchestration.resources import ElasticsearchResource
from crawl_assets_tests.es_node.distribution import ES_VERSION, Unavailable, major
from crawl_assets_tests.es_node.inspect import restore, snapshot, wipe
from crawl_assets_tests.es_node.node import NodeStartError, RealNode
from crawl_assets_tests.es_node.proxy import FaultProxy

T = TypeVar("T")

CREDENTIALS = ("API_KEY", "USERNAME", "PASSWORD", "CA_CERTS")
# Where the tests that run on both server lines live (paths under crawl_assets_tests/; the system tier excepted).
BOTH_LINES = ("es_node/", "index/", "api/", "enrich/test_index_and_search.py")


def external_url() -> str:
    return os.environ.get("CRAWL_TEST_ES_URL", "").rstrip("/")


def second_line() -> str | None:
    """The second server line's version (``CRAWL_TEST_ES9_VERSION``, default 9.2.0; empty turns it off), or None
    when it is off, the same major as the session's node, or the cluster is an external one."""
    version = os.environ.get("CRAWL_TEST_ES9_VERSION", "9.2.0").strip()
    if not version or external_url() or major(version) == major(ES_VERSION):
        return None
    return version


def line_id(version: str) -> str:
    """A line's test id: ``es8``, ``es9``."""
    return f"es{major(version)}"


def second_line_id() -> str | None:
    second = second_line()
    return line_id(second) if second else None


def on_second_line(nodeid: str) -> bool:
    """The test's id holds the second line's (``test_x[es9]``, ``test_x[a-es9]``, ``test_x[GET /][es9]``)."""
    tag = second_line_id()
    return bool(tag) and re.search(rf"[\[-]{tag}[\]-]", nodeid.partition("::")[2]) is not None


def on_both_lines(item: pytest.Item) -> bool:
    """An index, API or enrichment-join test outside the system tier."""
    from crawl_assets_tests.tiers import SYSTEM, listed, module_path

    return module_path(item).startswith(BOTH_LINES) and not item.get_closest_marker("system") \
        and not listed(item, SYSTEM)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each test of ``BOTH_LINES`` whose fixtures reach the node runs once per line (``es_line``)."""
    second = second_line()
    if second and "es_line" in metafunc.fixturenames and on_both_lines(metafunc.definition):
        metafunc.parametrize("es_line", [None, second], indirect=True, ids=[line_id(ES_VERSION), line_id(second)])


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


class Nodes:
    """The local nodes of a worker, one per server line, started when first asked for; asking for a line stops
    the other's node (a worker runs one line's tests together: one JVM at a time)."""

    def __init__(self) -> None:
        self.started: dict[str, RealNode] = {}

    def get(self, version: str) -> RealNode:
        for other in [v for v in self.started if v != version]:
            self.started.pop(other).stop()
        if version not in self.started:
            self.started[version] = start_or_skip(RealNode(version=version).start, f"node {version}")
        return self.started[version]

    def stop(self) -> None:
        while self.started:
            self.started.popitem()[1].stop()


@pytest.fixture(scope="session")
def es_nodes() -> Iterator[Nodes]:
    nodes = Nodes()
    try:
        yield nodes
    finally:
        nodes.stop()


@pytest.fixture(scope="session")
def es_line(request: pytest.FixtureRequest) -> str | None:
    """The test's server line: None for the session's own (``CRAWL_TEST_ES_VERSION``), else the second line's
    version (``pytest_generate_tests``). None, not the version, so that the tests on the session's line and
    every other test share one cached value (a changed value rebuilds every fixture built on it)."""
    return getattr(request, "param", None)


@pytest.fixture(scope="session")
def es_version(es_line: str | None) -> str:
    """The version of the test's server line."""
    return es_line or ES_VERSION


@pytest.fixture(scope="session")
def es_node(es_nodes: Nodes, es_version: str) -> RealNode | None:
    return None if external_url() else es_nodes.get(es_version)


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


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:  # noqa: ANN001
    """The second line's run, named with its tally (CI's output shows it ran, and on what)."""
    second, tag = second_line(), second_line_id()
    if not second or not tag:
        return
    tally = {outcome: len({r.nodeid for r in terminalreporter.stats.get(outcome, ()) if on_second_line(r.nodeid)})
             for outcome in ("passed", "failed", "error", "skipped")}
    if not any(tally.values()):
        return
    said = ", ".join(f"{n} {outcome}" for outcome, n in tally.items() if n)
    terminalreporter.write_sep("=", f"Elasticsearch {second} (the [{tag}] tests: index, API, enrichment join): {said}")
