"""The erasure tests' world: the demo's samples synced into a lake, an instance and the index once per session
(per worker), copied into each test's own folders, its indices restored from a snapshot of the node."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from crawl_assets import settings
from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.es_node.fixtures import EsCluster, resource
from crawl_assets_tests.es_node.node import RealNode
from crawl_assets_tests.worlds import world_env

SNAPSHOT = "erasure-synced"
# The world's folders and where a test has them (isolated_env): copied into tmp_path.
FOLDERS = {"home": "dagster_home", "lake": "lake", "imports": "imports"}


def sync_all(keys: list[str]) -> None:
    """Each source's sync job (raw → records → edges → index), as the scheduler would run them."""
    from crawl_assets.orchestration.run_names import sync_job_name
    from crawl_assets.definitions import build_definitions

    indexing = bool(settings.elasticsearch().url)  # only the configuration's job pair is defined
    with dg.DagsterInstance.get() as instance:
        for key in keys:
            platform = key.split(".")[1]
            if key not in instance.get_dynamic_partitions(f"{platform}_sources"):
                instance.add_dynamic_partitions(f"{platform}_sources", [key])
            job = build_definitions().resolve_job_def(sync_job_name(platform, indexing))
            assert job.execute_in_process(partition_key=key, instance=instance).success


@pytest.fixture(scope="session")
def synced_world(tmp_path_factory: pytest.TempPathFactory, es_url: str, es_node: RealNode | None) -> Path | None:
    """The folder of the synced world, its indices kept as snapshot ``SNAPSHOT``; None on an external cluster
    (no snapshots there: each test syncs again)."""
    if es_node is None:
        return None
    from crawl_assets import settings
    from crawl_assets.cli.demo import register_samples

    base = tmp_path_factory.mktemp("erasure_world")
    (base / "home").mkdir()
    shutil.copyfile(REPO / "dagster.yaml", base / "home" / "dagster.yaml")
    with world_env(base, es_url):
        with resource(es_url).get_client() as client:
            cluster = EsCluster(es_url, client, es_node)
            cluster.wipe()
            keys = register_samples(settings.registry_path())
            sync_all(keys)
            cluster.snapshot(SNAPSHOT)
    (base / "keys.json").write_text(json.dumps(keys))
    return base


@pytest.fixture
def synced_copy(synced_world: Path | None, tmp_path: Path, dagster_home: Path, es_cluster: EsCluster) -> Iterator[list[str] | None]:
    """This test's copy of the world (folders in place, indices restored): the source keys; None when there
    is no world to copy (the caller syncs)."""
    if synced_world is None:
        yield None
        return
    for name, target in FOLDERS.items():
        shutil.copytree(synced_world / name, tmp_path / target, symlinks=True, dirs_exist_ok=True)
    shutil.copyfile(synced_world / "sources.yaml", tmp_path / "sources.yaml")
    es_cluster.restore(SNAPSHOT)
    yield json.loads((synced_world / "keys.json").read_text())
