"""A batch run with the index step and no cluster: the index is skipped the way Dagster skips an
optional output (the source's chain succeeds, the index stays unmaterialized, the log says why)."""

from __future__ import annotations

import dagster as dg

from crawl_assets.orchestration.assets import derived_assets, raw_asset
from crawl_assets.orchestration.jobs import build_batch_job
from crawl_assets.orchestration.resources import ElasticsearchResource
from crawl_assets_tests.orchestration.conftest import x_registry

x_posts_raw = raw_asset("x")


def test_batch_with_index_step_and_no_cluster_succeeds(tmp_path, instance, resources):
    x_registry(tmp_path / "sources.yaml", {"a": "data_eng"})
    instance.add_dynamic_partitions("x_sources", ["acme.x.a"])
    job = build_batch_job("x", [x_posts_raw, *derived_assets("x", x_posts_raw, cluster_configured=False)])
    result = job.execute_in_process(
        run_config={"ops": {"x_sync_sources": {"config": {"partitions": ["acme.x.a"]}}}},
        resources={**resources, "elasticsearch": ElasticsearchResource(hosts=[])}, instance=instance,
        raise_on_error=False)
    assert result.success
    for asset in ("x_posts_raw", "normalized_records", "relation_edges"):
        assert instance.get_materialized_partitions(dg.AssetKey(["x", asset])) == {"acme.x.a"}
    assert instance.get_materialized_partitions(dg.AssetKey(["x", "search_index"])) == set()
    messages = [r.user_message for r in instance.all_logs(result.run_id)]
    assert any("search_index not materialized" in m and "CRAWL_ES_URL" in m for m in messages)
