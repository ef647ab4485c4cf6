"""A no-op sync of an export file does not read it again (its fingerprint is the one of the last sync), and
any change of the file, even one that keeps its size and modification time, is read and stored."""

from __future__ import annotations

import gzip
import os
import shutil

import dagster as dg
import pytest

from crawl_assets.cli.demo import sample_file
from crawl_assets.lake import Lake
from crawl_assets.orchestration.assets import raw_asset
from crawl_assets_tests.pipeline.export_source import KEY, telegram_export_source

RAW = dg.AssetKey(["telegram", "telegram_messages_raw"])


@pytest.fixture
def instance(isolated_env):
    with dg.instance_for_test() as inst:
        yield inst


def test_unchanged_export_is_not_read_again_and_any_change_is(tmp_path, instance):
    export, resources = telegram_export_source(tmp_path, instance)
    imports = export.parent
    lake = Lake(str(tmp_path / "lake"))

    def sync() -> str:
        assert dg.materialize([raw_asset("telegram")], partition_key=KEY, instance=instance, resources=resources).success
        [record] = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=RAW, asset_partitions=[KEY]),
                                                   limit=1).records
        return record.asset_materialization.metadata["result"].value

    def stored() -> list[bytes]:
        out = []
        for batch in lake.raw_batches("acme", "telegram", KEY):
            with lake.open_raw(batch) as fh:
                out.append(fh.read())
        return out

    assert sync() == "stored"
    assert sync().startswith("unchanged since the last sync (same size, times and inode)")  # not hashed
    assert len(stored()) == 1

    # the same size and modification time, other content: the change time differs, so it is read and stored
    before = export.stat()
    content = export.read_bytes()
    changed = content.replace("کانال".encode(), "کانـل".encode(), 1)  # one letter for another of two bytes
    assert changed != content and len(changed) == len(content)
    with export.open("r+b") as fh:
        fh.write(changed)
    os.utime(export, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (export.stat().st_size, export.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert sync() == "stored"
    assert stored() == [content, changed]

    # a copy of content already stored (another inode): hashed, recognised, not stored twice
    shutil.copyfile(sample_file("telegram_export/result.json"), imports / "copy.json")
    os.replace(imports / "copy.json", export)
    assert sync().startswith("unchanged: already stored as batch")
    assert sync().startswith("unchanged since the last sync")
    assert len(stored()) == 2

    # the same file with other normalization options: stored again, read with them
    (tmp_path / "sources.yaml").write_text(
        "sources:\n  - {name: export, tenant: acme, platform: telegram, kind: export_file, identifier: result.json,"
        " options: {languages: fa}}\n")
    assert sync() == "stored"
    assert len(stored()) == 3
    assert [gzip.decompress(p.read_bytes()) for p in sorted((tmp_path / "lake").rglob("*.jsonl.gz"))] == stored()
