"""Batch runs isolate a failing source; the scheduling sensor requests the right runs from instance state."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import dagster as dg
import pytest

from crawl_assets.orchestration.assets import derived_assets, raw_asset
from crawl_assets.orchestration.partition_state import load_checkpoint
from crawl_assets.orchestration.jobs import build_batch_job
from crawl_assets.orchestration.monitoring.health import load_health, record_failure, record_success
from crawl_assets.registry import load_registry
from crawl_assets.orchestration.resources import RegistryResource
from crawl_assets.locks.shared import SourceBusy, source_lock
from crawl_assets_tests.orchestration.conftest import x_registry

x_posts_raw = raw_asset("x")

RAW = dg.AssetKey(["x", "x_posts_raw"])
BAD_ENDPOINT = """  - name: badopt
    tenant: acme
    platform: x
    kind: search_query
    identifier: python
    options: {endpoint: bogus}
"""
NO_TOKEN = """  - name: notoken
    tenant: acme
    platform: x
    kind: search_query
    identifier: python
    credential: nosuch
"""


def run_batch(instance, resources, keys):
    job = build_batch_job("x", [x_posts_raw, *derived_assets("x", x_posts_raw)], include_index=False)
    config = {"ops": {"x_sync_sources_no_index": {"config": {"partitions": keys}}}}
    return job.execute_in_process(run_config=config, resources=resources, instance=instance, raise_on_error=False)


def test_batch_isolates_failing_sources(tmp_path, instance, resources):
    registry = x_registry(tmp_path / "sources.yaml", {"a": "data_eng", "gone": "no_such_account", "c": "persian_news"},
                          extra=BAD_ENDPOINT + NO_TOKEN)
    keys = ["acme.x.a", "acme.x.gone", "acme.x.badopt", "acme.x.notoken", "acme.x.c"]
    instance.add_dynamic_partitions("x_sources", keys)
    result = run_batch(instance, resources, keys)

    assert not result.success  # the run says some sources failed ...
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "3 of 5 sources failed" in failure.event_specific_data.error.message
    # ... but the healthy ones were fully synced, checkpoint and all three steps.
    for key in ("acme.x.a", "acme.x.c"):
        assert load_checkpoint(instance, RAW, key).get("newest_id")
        for asset in ("x_posts_raw", "normalized_records", "relation_edges"):
            assert key in instance.get_materialized_partitions(dg.AssetKey(["x", asset]))
    for key in ("acme.x.gone", "acme.x.badopt", "acme.x.notoken"):
        assert load_checkpoint(instance, RAW, key) == {}
        assert key not in instance.get_materialized_partitions(RAW)
    health = load_health(instance, keys)
    assert health["acme.x.a"].last_success and health["acme.x.a"].failures == 0
    assert health["acme.x.notoken"].failures == 1 and "NOSUCH" in health["acme.x.notoken"].last_error
    # a permanent or configuration error pauses only its source, with the reason people see in `sources show`
    reg = load_registry(registry)
    paused = {e.key: e.status_reason for e in reg.entries if e.paused}
    assert sorted(paused) == ["acme.x.gone", "acme.x.notoken"] and "no_such_account" in paused["acme.x.gone"]
    assert "CRAWL_X_BEARER_TOKEN__ACME__NOSUCH" in paused["acme.x.notoken"]
    # a bad option is refused when the registry is read: that entry is reported (and its run fails), not synced
    assert [(e.name, e.field) for e in reg.errors] == [("badopt", "options.endpoint")]
    # plottable numbers on every raw materialization
    mat = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=RAW, asset_partitions=["acme.x.a"]), limit=1)
    meta = mat.records[0].asset_materialization.metadata
    for name in ("records_new", "requests", "rate_limit_wait_seconds", "duration_seconds", "newest_event_lag_hours"):
        assert isinstance(meta[name].value, (int, float)), name
    assert "newest_event_lag_seconds" not in meta and "cursor_lag_seconds" not in meta, "lag in hours only"


def test_rerunning_a_batch_converges(tmp_path, instance, resources, x_server):
    x_registry(tmp_path / "sources.yaml", {"a": "data_eng", "c": "persian_news"})
    keys = ["acme.x.a", "acme.x.c"]
    instance.add_dynamic_partitions("x_sources", keys)
    assert run_batch(instance, resources, keys).success
    before = {k: load_checkpoint(instance, RAW, k) for k in keys}
    normalized = dg.AssetKey(["x", "normalized_records"])

    def derived_count() -> int:
        return len(instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=normalized), limit=100).records)

    derived = derived_count()
    assert not any(h.pending for h in load_health(instance, keys).values())
    x_server.clear_log()
    assert run_batch(instance, resources, keys).success
    assert {k: load_checkpoint(instance, RAW, k)["newest_id"] for k in keys} == {k: v["newest_id"] for k, v in before.items()}
    assert sum(x_server.counts().values()) <= 2 * len(keys), "an up-to-date source costs about one request"
    assert derived_count() == derived, "nothing new: the derived steps are skipped"

    # raw data stored by a run that died before deriving it (pending stays raised) is derived next time
    from crawl_assets.orchestration.monitoring.health import mark_pending

    mark_pending(instance, keys[0], load_health(instance, keys)[keys[0]], True)
    assert run_batch(instance, resources, keys).success
    assert derived_count() == derived + 1
    assert not load_health(instance, keys)[keys[0]].pending


def test_source_lock_excludes_other_processes(isolated_env):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom crawl_assets.locks.shared import source_lock\n"
        "with source_lock('acme.x.a'):\n    print('held', flush=True)\n    time.sleep(30)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(SourceBusy):
            with source_lock("acme.x.a", wait_seconds=0.3):
                pass
        with source_lock("acme.x.other"), source_lock("acme.x.other"):  # re-entrant in one process
            pass
    finally:
        holder.kill()
        holder.wait()
    with source_lock("acme.x.a", wait_seconds=5):  # the kernel released the dead holder's lock
        pass


# -- the scheduling sensor -------------------------------------------------------------------------------

def evaluate(instance, cursor=None):
    from crawl_assets.definitions import build_definitions

    defs = build_definitions()
    sensor = defs.get_repository_def().get_sensor_def("x_scheduler")
    # the context opens its own instance from the ref: the with-block disposes it (a dropped instance would
    # leave Dagster's process-wide defs-state storage pointing at it for the next test)
    with dg.build_sensor_context(instance_ref=instance.get_ref(), definitions=defs, cursor=cursor,
                                 resources={"registry": RegistryResource()}) as context:
        return sensor.evaluate_tick(context)


def batch_keys(result) -> list[list[str]]:
    return [r.run_config["ops"]["x_sync_sources_no_index"]["config"]["partitions"]
            for r in result.run_requests if r.job_name == "x_sync_batch_no_index"]


def test_scheduler_requests_batches_singles_and_skips_in_flight(tmp_path, instance, monkeypatch):
    names = {f"s{i:02d}": "data_eng" for i in range(30)}
    x_registry(tmp_path / "sources.yaml", names)
    keys = sorted(f"acme.x.{n}" for n in names)
    instance.add_dynamic_partitions("x_sources", keys[:-1])  # the last one's partition is not there yet
    now = time.time()
    record_failure(instance, keys[0], "boom", now=now - 3600)  # failed an hour ago: retried alone
    record_success(instance, keys[1], now=now)  # just synced: not due
    run = dg.DagsterRun(job_name="x_sync", run_id=str(uuid.uuid4()), status=dg.DagsterRunStatus.STARTED,
                        tags={"dagster/partition": keys[2]})
    instance.add_run(run)

    result = evaluate(instance)
    singles = [r.partition_key for r in result.run_requests if r.job_name == "x_sync_no_index"]
    batched = [k for b in batch_keys(result) for k in b]
    assert singles == [keys[0]]
    assert sorted(batched) == keys[3:-1]
    assert all(len(b) >= 2 for b in batch_keys(result)) and len(batch_keys(result)) <= 3
    assert all(r.tags["crawl/platform"] == "x" for r in result.run_requests)


def test_scheduler_cursor_walks_the_registry_in_slices(tmp_path, instance, monkeypatch):
    monkeypatch.setenv("CRAWL_SCHEDULER_WINDOW", "10")
    monkeypatch.setenv("CRAWL_SCHEDULER_MIN_BATCH", "100")
    names = {f"s{i:02d}": "data_eng" for i in range(25)}
    x_registry(tmp_path / "sources.yaml", names)
    keys = sorted(f"acme.x.{n}" for n in names)
    instance.add_dynamic_partitions("x_sources", keys)
    seen: list[str] = []
    cursor = None
    for _ in range(3):
        result = evaluate(instance, cursor)
        cursor = result.cursor
        assert len(cursor) < 40, "the cursor holds only a position"
        seen += [k for b in batch_keys(result) for k in b]
    assert set(seen) == set(keys), "three slices of 10 cover 25 sources (the last wraps around)"
    assert len(seen) == 30


def test_scheduler_respects_its_run_budget(tmp_path, instance, monkeypatch):
    monkeypatch.setenv("CRAWL_SCHEDULER_MAX_RUNS", "1")
    x_registry(tmp_path / "sources.yaml", {"a": "data_eng", "b": "persian_news"})
    instance.add_dynamic_partitions("x_sources", ["acme.x.a", "acme.x.b"])
    instance.add_run(dg.DagsterRun(job_name="x_sync_batch_no_index", run_id=str(uuid.uuid4()),
                                   status=dg.DagsterRunStatus.STARTING, tags={"crawl/platform": "x"}))
    result = evaluate(instance)
    assert not result.run_requests and "no free run slot" in (result.skip_message or "")
