"""A batch that cannot be normalized, or a source whose items are mostly rejected, leaves
``normalized_records`` materialized (the other batches are stored) but its non-blocking
``no_failed_batches`` check fails, and ``crawl-assets status`` shows why."""

from __future__ import annotations

import json

import dagster as dg
from click.testing import CliRunner

from crawl_assets.cli.main import cli
from crawl_assets.definitions import defs
from crawl_assets.lake import Lake
from crawl_assets.orchestration.monitoring.health import record_success
from crawl_assets.orchestration.resources import LakeResource
from crawl_assets_tests.normalize.shapes import x_page, x_tweet
from crawl_assets_tests.orchestration.conftest import x_registry

ASSET = dg.AssetKey(["x", "normalized_records"])


def _normalize(instance: dg.DagsterInstance, lake: Lake, key: str) -> dg.AssetCheckEvaluation:
    result = dg.materialize([defs.get_assets_def(ASSET)], partition_key=key, instance=instance,
                            resources={"lake": LakeResource(root=lake.root)})
    assert result.success, "a warning, not a failed run"
    record_success(instance, key, run_id=result.run_id)
    [check] = [c for c in result.get_asset_check_evaluations() if c.check_name == "no_failed_batches"]
    return check


def test_failed_batches_and_mostly_rejected_sources_fail_the_check_and_show_in_status(tmp_path, dagster_home):
    x_registry(tmp_path / "sources.yaml", {"good": "a", "broken": "b", "junk": "c"})
    lake = Lake(str(tmp_path / "lake"))
    page = x_page(x_tweet("1790000000000000001", "hello"))

    def batch(source: str, n: int, fmt: str, lines: list[bytes]) -> None:
        lake.write_raw_batch(tenant="acme", platform="x", source=f"acme.x.{source}", fmt=fmt, method="api",
                             batch_id=f"20260105T10000{n}000000Z-r1-0000", run_id="r1", lines=lines)

    batch("good", 1, "x-v2", [page])
    batch("broken", 1, "x-v2", [page])
    batch("broken", 2, "x-v9", [page])  # a format no normalizer knows: the batch fails, the first is stored
    batch("junk", 1, "x-v2", [page] + [b'{"data": [{"id": "x"}]}'] * 4)  # 4 of 5 items rejected
    with dg.DagsterInstance.get() as instance:
        for source in ("acme.x.good", "acme.x.broken", "acme.x.junk"):
            instance.add_dynamic_partitions("x_sources", [source])
        good, broken, junk = (_normalize(instance, lake, f"acme.x.{s}") for s in ("good", "broken", "junk"))
        # Still inside: status reads this live instance (the process-wide defs-state storage is its
        # storage while entered; after the block an earlier test's dropped instance could be current).
        assert good.passed
        assert not broken.passed and broken.severity == dg.AssetCheckSeverity.ERROR
        assert "1 batch could not be normalized" in broken.metadata["problem"].value
        assert not junk.passed and "4 of 5 items rejected" in junk.metadata["problem"].value

        out = CliRunner().invoke(cli, ["status", "--registry", str(tmp_path / "sources.yaml")], catch_exceptions=False)
        lines = {line.split()[0]: line for line in out.output.splitlines()[1:-1]}
        assert lines["acme.x.good"].split()[1] == "ok" and "normalization" not in lines["acme.x.good"]
        assert lines["acme.x.broken"].split()[1] == "degraded"
        assert "normalization: batch could not be normalized: UnknownFormatError" in lines["acme.x.broken"]
        assert lines["acme.x.junk"].split()[1] == "degraded" and "normalization: " in lines["acme.x.junk"]
        rows = {r["key"]: r for r in map(json.loads, CliRunner().invoke(
            cli, ["status", "--json", "--registry", str(tmp_path / "sources.yaml")]).output.splitlines())}
        assert rows["acme.x.good"]["normalization_problem"] is None and rows["acme.x.broken"]["normalization_problem"]
