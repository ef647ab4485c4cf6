"""Through Dagster's declarative automation: a sync that materializes a source's normalized records makes the
``enrichment_automation`` sensor request that source's enrichment (and nothing before or again after it
ran); a changed enricher stamp makes it request that enricher alone, which re-derives its features only.

Each tick is evaluated as the daemon evaluates the sensor's (``AutomationTickEvaluationContext``: same conditions,
same cursor, round-tripped through serialization like the stored one; ``dg.evaluate_automation_conditions`` builds
its cursor with a fresh storage query per partition subset, which made these tests minutes long); the requested
runs are then executed in process like a launched run would be."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import NamedTuple

import dagster as dg
from dagster._core.definitions.asset_daemon_cursor import AssetDaemonCursor
from dagster._core.definitions.automation_tick_evaluation_context import AutomationTickEvaluationContext
from dagster_shared.serdes import deserialize_value, serialize_value

from crawl_assets import settings
from crawl_assets.orchestration.assets.enrichment import AUTOMATION_SENSOR
from crawl_assets.orchestration.assets.enrichment_tenant import TENANT_TABLES_JOB
from crawl_assets.cli.demo import register_samples
from crawl_assets.enrich import store
from crawl_assets.enrich.config import ENRICHERS
from crawl_assets.lake import Lake
from crawl_assets_tests.enrich.test_assets import SOURCE, _defs, _digests, _key, _materialized, _tenant_tables


def _target(defs) -> dg.AssetSelection:
    """What the sensor evaluates on each tick."""
    return defs.resolve_sensor_def(AUTOMATION_SENSOR).asset_selection


class Tick(NamedTuple):
    requested: set[tuple[str, str | None]]  # (asset, partition) of every run the tick requested
    cursor: AssetDaemonCursor


def _tick(defs, instance, cursor: AssetDaemonCursor | None = None, evaluation_time: datetime | None = None) -> Tick:
    """One tick of the sensor, evaluated as the daemon does (the cursor stored between ticks)."""
    previous = deserialize_value(serialize_value(cursor), AssetDaemonCursor) if cursor else AssetDaemonCursor.empty()
    context = AutomationTickEvaluationContext(
        evaluation_id=previous.evaluation_id + 1, instance=instance, asset_graph=defs.resolve_asset_graph(),
        cursor=previous, materialize_run_tags={}, observe_run_tags={}, auto_observe_asset_keys=set(),
        asset_selection=_target(defs), logger=logging.getLogger(__name__), emit_backfills=False,
        evaluation_time=evaluation_time)
    run_requests, new_cursor, _ = context.evaluate()
    requested = {("/".join(key.path), request.partition_key) for request in run_requests
                 for key in request.asset_selection or ()}
    return Tick(requested, new_cursor)


def _run(defs, instance, requested: set[tuple[str, str | None]], tables: dict | None = None) -> dict[str, dict]:
    """Execute the requested partitions as the sensor's runs would (one run per partition; the tenant tables,
    unpartitioned, in a run of their own); the per-source assets' materialization metadata (the tenant
    tables' metadata into ``tables``, by enricher)."""
    meta: dict[str, dict] = {}
    for partition in sorted({p for _, p in requested}, key=str):
        keys = [dg.AssetKey(a.split("/")) for a, p in requested if p == partition]
        if partition is None:
            done = defs.resolve_job_def(TENANT_TABLES_JOB).execute_in_process(asset_selection=keys, instance=instance)
        else:
            done = defs.resolve_job_def("x_enrich").execute_in_process(partition_key=partition, asset_selection=keys,
                                                                       instance=instance)
        assert done.success
        meta.update(_materialized(done))
        if tables is not None:
            tables.update(_tenant_tables(done))
    return meta


TENANT_WIDE = {name for name, cls in ENRICHERS.items() if cls.scope == "tenant"}


def test_the_sensor_targets_every_enrichment_asset_and_runs_by_default():
    defs = _defs()
    sensor = defs.resolve_sensor_def(AUTOMATION_SENSOR)
    assert isinstance(sensor, dg.AutomationConditionSensorDefinition)
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    graph = defs.resolve_asset_graph()
    targeted = sensor.asset_selection.resolve(graph)
    assert targeted == {k for k in graph.get_all_asset_keys() if "enrichment" in k.path[:2]} and targeted
    assert {k for k in targeted if len(k.path) == 2} == {dg.AssetKey(["enrichment", n]) for n in TENANT_WIDE}
    assert all(graph.get(k).automation_condition is not None for k in targeted)
    assert not [k for k in graph.get_all_asset_keys() - targeted if graph.get(k).automation_condition is not None], \
        "no other asset is automated (syncs stay with their schedulers)"


def test_a_sync_leads_to_enrichment_and_a_new_stamp_re_derives_only_that_enricher(dagster_home, tmp_path, monkeypatch):
    register_samples(settings.registry_path())
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("x_sources", [SOURCE])
        defs = _defs()
        tick = _tick(defs, instance)
        assert not tick.requested, "nothing to enrich before the source's records exist"

        # the scheduler's batch job (its materializations are logged by one op, not by the assets' own steps)
        sync = defs.resolve_job_def("x_sync_batch_no_index").execute_in_process(
            run_config={"ops": {"x_sync_sources_no_index": {"config": {"partitions": [SOURCE]}}}},
            instance=instance, tags={"crawl/platform": "x"})
        assert sync.success
        tick = _tick(defs, instance, cursor=tick.cursor)
        assert tick.requested == {(f"x/enrichment/{name}", SOURCE) for name in ENRICHERS}, \
            "the sync's materialization of normalized_records requests that source's enrichment"
        meta = _run(defs, instance, tick.requested)
        assert set(meta) == set(ENRICHERS) and all(m["parts_enriched"] >= 1 for m in meta.values())

        tick = _tick(defs, instance, cursor=tick.cursor)
        assert tick.requested == {(f"enrichment/{name}", None) for name in TENANT_WIDE}, \
            "after the sources: the tenant-wide tables, once"
        _run(defs, instance, tick.requested)
        tick = _tick(defs, instance, cursor=tick.cursor)
        assert not tick.requested, "enriched once: not requested again without a new sync"

        lake = Lake(settings.lake_root())
        features = _digests(Path(lake.root) / "features")
        config = tmp_path / "enrichment.yaml"
        config.write_text("enrichers:\n  trends: {window_hours: 12}\n")
        monkeypatch.setenv("CRAWL_ENRICHMENT", str(config))
        changed = _defs()  # the code location reloaded with the new configuration
        tick = _tick(changed, instance, cursor=tick.cursor)
        assert tick.requested == {("x/enrichment/trends", SOURCE)}, "a new stamp requests that enricher only"
        meta = _run(changed, instance, tick.requested)
        assert set(meta) == {"trends"} and meta["trends"]["parts_enriched"] >= 1
        stamp = changed.resolve_asset_graph().get(_key("trends")).code_version
        parts = list(store.read_parts(lake, store.tenant_parts(lake, "trends", "demo")))
        assert parts and all(set(t.column("enricher_version").to_pylist()) == {stamp} for _, t in parts)
        tick = _tick(changed, instance, cursor=tick.cursor)
        assert tick.requested == {("enrichment/trends", None)}, "then the trends tables alone"
        tables: dict[str, dict] = {}
        _run(changed, instance, tick.requested, tables)
        assert tables["trends"]["tenants_rebuilt"] == 1
        after = _digests(Path(lake.root) / "features")
        assert {k: v for k, v in after.items() if not k.startswith("trends/")} == \
            {k: v for k, v in features.items() if not k.startswith("trends/")}, "the other enrichers' features stay"

        tick = _tick(changed, instance, cursor=tick.cursor)
        assert not tick.requested, "re-derived once"


ARCHIVE = "demo.x.sample-archive"


def test_a_batch_sync_of_two_sources_rebuilds_each_tenant_table_once_after_both(dagster_home):
    """The batch's sources are enriched in their own runs, which write only their own parts; the tenant-wide
    tables wait while any of those runs is queued or in progress, then are rebuilt once from both."""
    register_samples(settings.registry_path())
    lake = Lake(settings.lake_root())
    # evaluation times within one hour (the tables' hourly escape from waiting is checked on purpose below)
    hour = (datetime.now(timezone.utc) + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)
    clock = iter(hour + timedelta(minutes=1, seconds=s) for s in range(1000))
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("x_sources", [SOURCE, ARCHIVE])
        defs = _defs()
        tick = _tick(defs, instance, evaluation_time=next(clock))
        sync = defs.resolve_job_def("x_sync_batch_no_index").execute_in_process(
            run_config={"ops": {"x_sync_sources_no_index": {"config": {"partitions": [SOURCE, ARCHIVE]}}}},
            instance=instance, tags={"crawl/platform": "x"})
        assert sync.success
        tick = _tick(defs, instance, cursor=tick.cursor,
                                                 evaluation_time=next(clock))
        requested = tick.requested
        assert requested == {(f"x/enrichment/{name}", s) for name in ENRICHERS for s in (SOURCE, ARCHIVE)}

        # the archive's run is queued (created, not started) while the search's run is done
        job = defs.resolve_job_def("x_enrich")
        queued = instance.create_run_for_job(
            job, asset_selection=frozenset(_key(n) for n in ENRICHERS), tags={"dagster/partition": ARCHIVE},
            run_config={})
        meta = _run(defs, instance, {r for r in requested if r[1] == SOURCE})
        assert all("tenants_rebuilt" not in m and not any(k.startswith("tenant_") for k in m) for m in meta.values())
        assert not [n for n in TENANT_WIDE if lake.exists(store.tenant_path(n, "demo", _first_table(n)))], \
            "a source's run writes its own parts only, never the tenant's tables"
        tick = _tick(defs, instance, cursor=tick.cursor,
                                                 evaluation_time=next(clock))
        assert not tick.requested, "the tenant tables wait while a source of the batch is queued"
        later = _tick(defs, instance, cursor=tick.cursor, evaluation_time=hour + timedelta(hours=1, seconds=1))
        assert later.requested == {(f"enrichment/{name}", None) for name in TENANT_WIDE}, \
            "but not past the next hour (sources enriched without pause); this tick is not carried on"

        instance.report_run_canceled(instance.get_run_by_id(queued.run_id))  # the daemon would launch it; run it here
        _run(defs, instance, {r for r in requested if r[1] == ARCHIVE})
        tick = _tick(defs, instance, cursor=tick.cursor,
                                                 evaluation_time=next(clock))
        assert tick.requested == {(f"enrichment/{name}", None) for name in TENANT_WIDE}, "then once, for both"
        tables: dict[str, dict] = {}
        _run(defs, instance, tick.requested, tables)
        assert set(tables) == TENANT_WIDE and all(t["tenants_rebuilt"] == 1 for t in tables.values())
        for name in TENANT_WIDE:
            sources = {p.split("/")[-2] for p in store.tenant_parts(lake, name, "demo")}
            assert sources == {SOURCE, ARCHIVE}, "built from both sources' parts"
        tick = _tick(defs, instance, cursor=tick.cursor,
                                                 evaluation_time=next(clock))
        assert not tick.requested


def _first_table(name: str) -> str:
    """The first table of a tenant-wide enricher."""
    return ENRICHERS[name].tables[0]  # type: ignore[attr-defined]
