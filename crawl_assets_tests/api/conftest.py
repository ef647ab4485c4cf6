"""The API tests' world: records indexed into the session's real Elasticsearch node by the real pipeline
(Dagster jobs over export sources: the bundled demo samples plus generated X pages, ``corpus.py``) for
tenant ``demo`` and two rival tenants (``rival``, and ``demo-x`` whose name starts like ``demo``'s), once
for the whole package; keys in a SQLite key store; the app behind a ``TestClient``.

No test of this package wipes the node (``es_cluster`` is not used here), so the package-scoped world
stays as built; tests that need another world (an unreachable index) build their own app.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch
from fastapi.testclient import TestClient

from crawl_assets_tests.api import corpus
from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.es_node.fixtures import resource
from crawl_assets_tests.es_node.inspect import wipe
from crawl_assets_tests.worlds import world_env

TENANTS = ("demo", "rival", "demo-x")


@dataclass
class World:
    es: Elasticsearch
    url: str
    keys_url: str
    home: Path
    keys: dict[str, str]  # tenant -> full API key
    indexed: dict[str, int]  # tenant -> records in its alias


def _register(tenant: str, name: str, pages: list[dict], registry) -> str:  # noqa: ANN001
    from crawl_assets.registry import SourceEntry
    from crawl_assets.sdk.exports import tenant_import_root

    target = tenant_import_root(tenant) / "generated" / f"{name}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(corpus.jsonl(pages))
    entry = SourceEntry(name=name, tenant=tenant, platform="x", kind="export_file",
                        identifier=f"generated/{name}.jsonl", options={"format": "x-v2"})
    registry.add(entry)
    return entry.key


def build_world(es_url: str, base: Path) -> World:
    import dagster as dg

    from crawl_assets import settings
    from crawl_assets.api.access import KeyStore
    from crawl_assets.cli.demo import QUIET, register_samples
    from crawl_assets.definitions import build_definitions
    from crawl_assets.registry import load_registry

    home = base / "home"
    home.mkdir(parents=True)
    shutil.copyfile(REPO / "dagster.yaml", home / "dagster.yaml")
    keys = register_samples(settings.registry_path())
    reg = load_registry(settings.registry_path())
    keys += [_register("demo", "gen-a", corpus.main_source(), reg), _register("demo", "gen-b", corpus.second_source(), reg),
             _register("rival", "gen-r", corpus.rival_source("rival"), reg),
             _register("demo-x", "gen-x", corpus.rival_source("demo-x"), reg)]
    reg.save()
    defs = build_definitions()
    with dg.DagsterInstance.get() as instance:
        for key in keys:
            platform = key.split(".")[1]
            instance.add_dynamic_partitions(f"{platform}_sources", [key])
        for key in keys:
            job = defs.resolve_job_def(f"{key.split('.')[1]}_sync")
            result = job.execute_in_process(partition_key=key, instance=instance, raise_on_error=False, run_config=QUIET)
            assert result.success, f"pipeline run of {key} failed"
    client = resource(es_url).get_client()
    client.indices.refresh(index="crawl-*")
    indexed = {t: client.count(index=f"crawl-records-{t}")["count"] for t in TENANTS}
    keys_url = f"sqlite:///{base / 'keys.db'}"
    store = KeyStore(keys_url)
    api_keys = {t: store.create(t, f"tests of {t}")[1] for t in TENANTS}
    store.close()
    return World(client, es_url, keys_url, home, api_keys, indexed)


@pytest.fixture(scope="package")
def world(es_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp_path_factory.mktemp("api_world")
    with world_env(base, es_url):
        with resource(es_url).get_client() as client:
            wipe(client)
        world = build_world(es_url, base)
    try:
        yield world
    finally:
        world.es.close()


def async_twin(es: object):  # noqa: ANN201
    """A builder of the asyncio client for the nodes (and retries) of ``es``, as the served API has one; None
    for something that is not a client (the app then runs every query on ``es`` in a worker thread)."""
    from crawl_assets.index.client import build_async_client

    if not isinstance(es, Elasticsearch):
        return None
    hosts = [node.base_url for node in es.transport.node_pool.all()]
    retries = es.transport.max_retries
    return lambda: build_async_client(hosts, max_retries=retries, request_timeout=30)


def make_client(world: World, es: Elasticsearch | None = None, **app_options) -> TestClient:  # noqa: ANN003
    from crawl_assets.api.app import create_app
    from crawl_assets.api.access import KeyStore

    from crawl_assets.lake import Lake

    es = es or world.es
    app_options.setdefault("async_client", async_twin(es))
    app_options.setdefault("lake", Lake(str(world.home.parent / "lake")))
    app = create_app(es, KeyStore(world.keys_url, cache_seconds=0), **app_options)
    return TestClient(app, raise_server_exceptions=False)


@pytest.fixture(scope="package")
def api(world: World) -> Iterator[TestClient]:
    with make_client(world, rate_per_minute=100_000) as client:
        yield client


def auth(world: World, tenant: str = "demo") -> dict[str, str]:
    return {"Authorization": f"Bearer {world.keys[tenant]}"}


@pytest.fixture
def demo(world: World, api: TestClient):  # noqa: ANN201
    """``get(path, **params)`` as tenant demo: the parsed JSON of a 200 answer (asserted)."""

    def get(path: str, expect: int = 200, tenant: str = "demo", **params):  # noqa: ANN202, ANN003
        resp = api.get(path, params=params, headers=auth(world, tenant))
        assert resp.status_code == expect, (resp.status_code, resp.text[:500])
        return resp.json() if resp.headers.get("content-type", "").startswith("application/json") else resp

    return get




def open_contexts(es: Elasticsearch) -> int:
    """Search contexts open on the node (each shard of a point in time holds one)."""
    stats = es.nodes.stats(metric="indices", index_metric="search")
    return sum(node["indices"]["search"]["open_contexts"] for node in stats["nodes"].values())

