"""A tenant's import folder that is itself a symbolic link (imports/evil2 -> /tmp/outside) is refused by
``sources add`` and by the sync, naming the link (not a misleading format error)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from crawl_assets.cli.demo import sample_file
from crawl_assets.cli.main import cli
from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.registry.store import Registry
from crawl_assets.sources.export_file.collect import ingest_export_file
from crawl_assets.sdk.errors import PauseSource
from crawl_assets.sdk.exports import tenant_import_root


def test_a_linked_tenant_folder_is_refused_naming_the_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "result.json").write_bytes(sample_file("telegram_export/result.json").read_bytes())
    root = tenant_import_root("evil2")
    root.parent.mkdir(parents=True, exist_ok=True)
    root.symlink_to(outside, target_is_directory=True)

    out = CliRunner().invoke(cli, ["sources", "add", "--platform", "telegram", "--kind", "export_file", "--tenant",
                                   "evil2", "--identifier", "result.json", "--name", "x",
                                   "--registry", str(tmp_path / "sources.yaml")])
    assert out.exit_code == 2 and "field 'identifier'" in out.output, out.output
    assert f"import folder {root} is a symbolic link" in out.output and "options.format" not in out.output

    entry = SourceEntry(name="x", tenant="evil2", platform="telegram", kind="export_file", identifier="result.json")
    with pytest.raises(PauseSource, match="is a symbolic link"):
        ingest_export_file(entry, Registry(path=tmp_path / "sources.yaml"), Lake(str(tmp_path / "lake")), "r1")
