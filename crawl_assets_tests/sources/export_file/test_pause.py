"""An export file that cannot be read (missing, refused, a bad option) pauses its source like any other source's
``PauseSource``: the reason names the file and the registry field, and the other sources of the run go on."""

from __future__ import annotations

import dagster as dg
import pytest

from crawl_assets.lake import Lake
from crawl_assets.orchestration.assets import derived_assets, raw_asset
from crawl_assets.orchestration.jobs import build_batch_job
from crawl_assets.sources.export_file.collect import ingest_export_file
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.registry import SourceEntry, load_registry
from crawl_assets.registry.store import Registry
from crawl_assets.sdk.errors import PauseSource
from crawl_assets.sdk.exports import tenant_import_root
from crawl_assets.sdk.tenant_secrets import TenantSecret
from crawl_assets.sources.x.resource import XResource
from crawl_assets_tests.normalize.shapes import x_page, x_tweet

RAW = dg.AssetKey(["x", "x_posts_raw"])


def test_a_missing_export_file_is_a_pause_naming_the_file(tmp_path, isolated_env):
    entry = SourceEntry(name="gone", tenant="acme", platform="x", kind="export_file", identifier="nowhere/tweets.jsonl",
                        options={"format": "x-v2"})
    with pytest.raises(PauseSource, match=r"export file for source 'acme.x.gone' cannot be opened: nowhere/tweets.jsonl under .*imports/acme: .*field 'identifier'"):
        ingest_export_file(entry, Registry(path=tmp_path / "sources.yaml"), Lake(str(tmp_path / "lake")), "r1")


def test_a_bad_export_pauses_its_source_and_the_others_go_on(tmp_path, isolated_env):
    (imports := tenant_import_root("acme")).mkdir(parents=True)
    (imports / "good.jsonl").write_bytes(x_page(x_tweet("1790000000000000001", "hello")) + b"\n")
    registry = tmp_path / "sources.yaml"
    registry.write_text("sources:\n"
                        "  - {name: good, tenant: acme, platform: x, kind: export_file, identifier: good.jsonl, "
                        "options: {format: x-v2}}\n"
                        "  - {name: gone, tenant: acme, platform: x, kind: export_file, identifier: gone.jsonl, "
                        "options: {format: x-v2}}\n")
    keys = ["acme.x.good", "acme.x.gone"]
    raw = raw_asset("x")
    job = build_batch_job("x", [raw, *derived_assets("x", raw)], include_index=False)
    resources = {"lake": LakeResource(root=str(tmp_path / "lake")), "registry": RegistryResource(path=str(registry)),
                 "x": XResource(base_url="http://127.0.0.1:9", secrets=[TenantSecret(tenant="acme", value="t")])}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("x_sources", keys)
        result = job.execute_in_process(run_config={"ops": {"x_sync_sources_no_index": {"config": {"partitions": keys}}}},
                                        resources=resources, instance=instance, raise_on_error=False)
        assert not result.success
        assert instance.get_materialized_partitions(RAW) == {"acme.x.good"}, "the readable export is stored"
    paused = {e.key: e.status_reason for e in load_registry(registry).entries if e.paused}
    assert list(paused) == ["acme.x.gone"], paused
    assert "cannot be opened: gone.jsonl under" in paused["acme.x.gone"] and "field 'identifier'" in paused["acme.x.gone"], paused
