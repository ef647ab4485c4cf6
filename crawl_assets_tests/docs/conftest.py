"""The demo's world, built once per session: ``crawl-assets demo``'s home without a cluster (the README's quick
start), in this process; each user copies it (``shutil.copytree``) and changes only the copy."""

from __future__ import annotations

from pathlib import Path

import pytest

UNSET = ("CRAWL_LAKE", "CRAWL_REGISTRY", "CRAWL_IMPORT_ROOT", "CRAWL_ENRICHMENT", "CRAWL_RETENTION", "CRAWL_ES_URL",
         "CRAWL_ES_API_KEY", "CRAWL_ES_USERNAME", "CRAWL_ES_PASSWORD", "DAGSTER_PG_URL", "DAGSTER_PG_HOST")


@pytest.fixture(scope="session")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import dagster as dg

    from crawl_assets.cli.demo import _materialize_samples, install_instance_yaml
    from crawl_assets.definitions import build_definitions

    home = tmp_path_factory.mktemp("demo_world") / ".crawl_home"
    with pytest.MonkeyPatch.context() as mp:
        for name in UNSET:
            mp.delenv(name, raising=False)
        mp.setenv("DAGSTER_HOME", str(home))
        install_instance_yaml(home)
        with dg.DagsterInstance.get() as instance:
            failures = _materialize_samples(instance, build_definitions(), home, home_given=False)
    assert failures == 0, "the demo failed to build its world"
    return home
