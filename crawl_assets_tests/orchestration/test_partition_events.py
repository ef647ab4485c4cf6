"""Failure reports on a source's partition, and checkpoints that survive them."""

from __future__ import annotations

import dagster as dg

from crawl_assets.orchestration.partition_state import CHECKPOINT_KEY, PAGE, load_checkpoint
from crawl_assets.orchestration.monitoring.partition_events import FAILURE_KEY, SyncFailure

RAW = dg.AssetKey(["x", "x_posts_raw"])


def _observe(instance: dg.DagsterInstance, metadata: dict) -> None:
    instance.report_runless_asset_event(dg.AssetObservation(asset_key=RAW, partition="acme.x.a", metadata=metadata))


def test_the_newest_checkpoint_is_found_behind_failure_reports(instance):
    instance.add_dynamic_partitions("x_sources", ["acme.x.a"])
    _observe(instance, {CHECKPOINT_KEY: dg.MetadataValue.json({"newest_id": "1"})})
    _observe(instance, {CHECKPOINT_KEY: dg.MetadataValue.json({"newest_id": "2"})})
    for i in range(PAGE * 2 + 3):  # more failures than one page of observations
        _observe(instance, {FAILURE_KEY: f"attempt {i} failed"})
    assert load_checkpoint(instance, RAW, "acme.x.a") == {"newest_id": "2"}
    assert load_checkpoint(instance, RAW, "acme.x.other") == {}


def test_failures_are_described_by_kind():
    wait = SyncFailure.of(dg.RetryRequested(seconds_to_wait=90), where="x/x_posts_raw", now=1000.0)
    assert wait.message.startswith("x/x_posts_raw: waiting 90s") and wait.retry_after == 1090.0
    paused = SyncFailure.of(dg.Failure("source paused: token", metadata={"paused_reason": "no token"}))
    assert paused.message == "source paused: token" and paused.paused_reason == "no token"
    crash = SyncFailure.of(KeyError("boom"))
    assert crash.message == "KeyError: 'boom'" and crash.paused_reason is None and crash.retry_after is None


def test_a_derived_step_failing_in_a_batch_is_planned_not_materialized_and_reported(tmp_path, instance, resources):
    """A source whose normalization fails inside a batch (its quarantine cannot be written; a bad batch alone
    is set aside without failing): its raw partition is materialized, its normalized_records partition has
    a planned event of the (failed) run and no materialization (what the
    partitions page reads as Failed), with the failure observed on that partition; the other source is
    materialized all along."""
    from crawl_assets.orchestration.assets import derived_assets
    from crawl_assets.cli.demo import sample_file
    from crawl_assets.orchestration.jobs import build_batch_job
    from crawl_assets.lake import Lake, layout
    from crawl_assets.sdk.exports import tenant_import_root
    from crawl_assets.orchestration.assets import raw_asset

    x_posts_raw = raw_asset("x")

    (imports := tenant_import_root("acme")).mkdir(parents=True)
    lines = ["sources:"]
    for name in ("good", "bad"):
        (imports / f"{name}.js").write_bytes(sample_file("x_archive_tweets.js").read_bytes())
        lines.append(f"  - {{name: {name}, tenant: acme, platform: x, kind: export_file, identifier: {name}.js, "
                     "options: {format: x-archive}}")
    (tmp_path / "sources.yaml").write_text("\n".join(lines) + "\n")
    keys = ["acme.x.good", "acme.x.bad"]
    instance.add_dynamic_partitions("x_sources", keys)
    lake = Lake(str(tmp_path / "lake"))
    lake.write_raw_batch(  # a raw batch no normalizer reads: set aside in quarantine with its reason...
        tenant="acme", platform="x", source="acme.x.bad", batch_id="20260101T000000000000Z-old-0000",
        fmt="no-such-format", method="export", run_id="old", lines=[b"{}"])
    blocked = lake.path(layout.source_dir("quarantine", "acme", "x", "acme.x.bad"))
    lake.fs.makedirs(blocked.rsplit("/", 1)[0], exist_ok=True)
    with lake.fs.open(blocked, "wb") as fh:  # ...but a file stands where its quarantine folder goes: the step fails
        fh.write(b"in the way")
    job = build_batch_job("x", [x_posts_raw, *derived_assets("x", x_posts_raw)], include_index=False)
    result = job.execute_in_process(run_config={"ops": {"x_sync_sources_no_index": {"config": {"partitions": keys}}}},
                                    resources=resources, instance=instance, raise_on_error=False)
    assert not result.success
    normalized = dg.AssetKey(["x", "normalized_records"])
    planned = {(e.dagster_event.asset_key, e.dagster_event.event_specific_data.partition)
               for e in instance.all_logs(result.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED)}
    assert {(key, source) for key in (RAW, normalized) for source in keys} <= planned
    assert instance.get_materialized_partitions(RAW) == set(keys)
    assert instance.get_materialized_partitions(normalized) == {"acme.x.good"}
    [record] = instance.fetch_observations(dg.AssetRecordsFilter(asset_key=normalized, asset_partitions=["acme.x.bad"]),
                                           limit=1).records
    failure = record.asset_observation.metadata
    assert "x/normalized_records" in failure[FAILURE_KEY].value and failure["failed_run"].value == result.run_id
