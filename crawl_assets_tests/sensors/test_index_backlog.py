"""Records synced before a cluster was configured are indexed once one is: with ``CRAWL_ES_URL`` set (the code
location reloaded), the ``index_backlog_sensor`` requests an index-only run of each source with unindexed
parts, and those runs index them on the real node; a second tick finds nothing left."""

from __future__ import annotations

import dagster as dg

from crawl_assets.cli.demo import register_samples
from crawl_assets import settings

X_SOURCES = ("demo.x.sample-archive", "demo.x.sample-search")


def _definitions(monkeypatch, es_env: dict[str, str] | None) -> dg.Definitions:
    from crawl_assets.definitions import build_definitions

    for var, value in (es_env or {}).items():
        monkeypatch.setenv(var, value)
    if es_env is None:
        monkeypatch.delenv("CRAWL_ES_URL", raising=False)
    return build_definitions()


def test_records_synced_without_a_cluster_are_indexed_when_one_appears(dagster_home, monkeypatch, es_cluster):
    register_samples(settings.registry_path())
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("x_sources", list(X_SOURCES))
        before = _definitions(monkeypatch, None)
        assert "index_backlog_sensor" not in {s.name for s in before.sensors}, "nothing to index into"
        for key in X_SOURCES:
            assert before.resolve_job_def("x_sync_batch_no_index").execute_in_process(
                run_config={"ops": {"x_sync_sources_no_index": {"config": {"partitions": [key]}}}},
                instance=instance).success

        after = _definitions(monkeypatch, es_cluster.env())  # CRAWL_ES_URL set, the code location reloaded
        sensor = next(s for s in after.sensors if s.name == "index_backlog_sensor")
        resources = {k: v for k, v in after.resources.items() if k in ("lake", "registry")}
        tick = sensor(dg.build_sensor_context(instance=instance, resources=resources, definitions=after))
        requested = {r.partition_key: r for r in tick.run_requests}
        assert set(requested) == set(X_SOURCES), tick
        for key, request in requested.items():
            assert request.job_name == "x_sync" and request.asset_selection == [dg.AssetKey(["x", "search_index"])]
            result = after.resolve_job_def("x_sync").execute_in_process(
                partition_key=key, instance=instance, asset_selection=request.asset_selection)
            assert result.success
        es_cluster.client.indices.refresh(index="crawl-*")
        for key in X_SOURCES:
            got = es_cluster.client.count(index="crawl-records-demo", query={"term": {"source": key}})["count"]
            assert got > 0, key

        again = sensor(dg.build_sensor_context(instance=instance, resources=resources, definitions=after,
                                               cursor=tick.cursor))
        assert isinstance(again, dg.SkipReason) or not again.run_requests
