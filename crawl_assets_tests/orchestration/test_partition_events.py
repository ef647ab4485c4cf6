"""Failure reports on a source's partition, and checkpoints that survive them."""

from __future__ import annotations

import dagster as dg

from crawl_assets.checkpoints import CHECKPOINT_KEY, PAGE, load_checkpoint
from crawl_assets.monitoring.partition_events import FAILURE_KEY, SyncFailure

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
