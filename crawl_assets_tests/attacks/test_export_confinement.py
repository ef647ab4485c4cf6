"""Export files are confined to their tenant's import root (issue 15, item 1). Before, an export_file source
could name any readable path: /proc/self/environ synced every credential variable of the process into the
tenant's raw lake and quarantine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from crawl_assets import settings
from crawl_assets.lake import Lake
from crawl_assets.orchestration.resources import LakeResource, RegistryResource

CANARY = "CANARYexp0rt5ecretV4lue"
ARCHIVE = 'window.YTD.tweets.part0 = [{"tweet": {"id_str": "1", "id": "1", "full_text": "hi", ' \
          '"created_at": "Wed Apr 17 06:00:00 +0000 2024", "entities": {}}}]\n'


def _add(registry: Path, identifier: str, tenant: str = "acme", name: str = "dump") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "crawl_assets.cli.main", "sources", "add", "--platform", "x", "--kind", "export_file",
         "--identifier", identifier, "--name", name, "--tenant", tenant, "--option", "format=x-archive",
         "--registry", str(registry)], capture_output=True, text=True, timeout=120, env=os.environ.copy())


def _sync(registry: Path, key: str) -> dg.ExecuteInProcessResult:
    from crawl_assets.orchestration.assets import raw_asset

    x_posts_raw = raw_asset("x")
    from crawl_assets.sources.x.resource import XResource

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("x_sources", [key])
        return dg.materialize([x_posts_raw], partition_key=key, instance=instance, raise_on_error=False,
                              resources={"lake": LakeResource(), "registry": RegistryResource(path=str(registry)),
                                         "x": XResource()})


def _lake_holds(text: str) -> list[str]:
    root = Path(settings.lake_root())
    hits = []
    for path in root.rglob("*") if root.exists() else []:
        if path.is_file():
            import gzip

            data = path.read_bytes()
            data = gzip.decompress(data) if path.suffix == ".gz" else data
            if text.encode() in data:
                hits.append(str(path))
    return hits


@pytest.fixture
def roots(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAWL_SECRET_FOR_THE_CANARY", CANARY)
    acme = Path(os.environ["CRAWL_IMPORT_ROOT"]) / "acme"  # set for every test by the root conftest
    globex = Path(os.environ["CRAWL_IMPORT_ROOT"]) / "globex"
    for folder in (acme, globex):
        folder.mkdir(parents=True)
    (acme / "tweets.js").write_text(ARCHIVE)
    (globex / "private.js").write_text(ARCHIVE.replace('"hi"', f'"{CANARY}"'))
    outside = tmp_path / "outside.js"
    outside.write_text(ARCHIVE.replace('"hi"', f'"{CANARY}"'))
    return tmp_path / "sources.yaml", acme, globex, outside


def test_sources_add_refuses_paths_outside_the_tenants_import_root(roots):
    registry, acme, _, outside = roots
    (acme / "link.js").symlink_to(outside)
    (acme / "linked_dir").symlink_to(outside.parent, target_is_directory=True)
    for identifier in ("/proc/self/environ", str(outside), "../globex/private.js", "sub/../../globex/private.js",
                       "link.js", "linked_dir/outside.js", str(acme / ".." / "globex" / "private.js")):
        result = _add(registry, identifier)
        assert result.returncode == 2, (identifier, result.stdout, result.stderr)
        assert "import root" in result.stderr and "Traceback" not in result.stderr, identifier
    assert not registry.exists() or "dump" not in registry.read_text()
    ok = _add(registry, "tweets.js")
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("identifier", ["/proc/self/environ", "../globex/private.js", "LINK", "DIRLINK"])
def test_a_sync_refuses_an_escaping_path_even_when_the_registry_was_edited_by_hand(roots, identifier):
    registry, acme, _, outside = roots
    (acme / "link.js").symlink_to(outside)
    (acme / "dir").symlink_to(outside.parent, target_is_directory=True)
    identifier = {"LINK": "link.js", "DIRLINK": "dir/outside.js"}.get(identifier, identifier)
    registry.write_text("sources:\n  - {name: dump, tenant: acme, platform: x, kind: export_file, "
                        f"identifier: '{identifier}', options: {{format: x-archive}}}}\n")
    result = _sync(registry, "acme.x.dump")
    assert not result.success
    failure = " ".join(e.step_failure_data.error.message for e in result.all_events if e.is_step_failure)
    assert "import root" in failure or "symbolic link" in failure
    assert _lake_holds(CANARY) == [] and not Lake(settings.lake_root()).raw_batches("acme", "x", "acme.x.dump")


def test_a_file_swapped_for_a_link_after_it_was_added_is_refused_at_sync_time(roots):
    registry, acme, _, outside = roots
    assert _add(registry, "tweets.js").returncode == 0
    assert _sync(registry, "acme.x.dump").success
    (acme / "tweets.js").unlink()
    (acme / "tweets.js").symlink_to(outside)  # the attacker swaps the file once the source is registered
    result = _sync(registry, "acme.x.dump")
    assert not result.success and _lake_holds(CANARY) == []
