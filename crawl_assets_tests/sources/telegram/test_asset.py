"""``telegram_messages_raw`` in Dagster: partitions per source, checkpoints in the instance, permanent
errors pausing only their source, long flood waits as step retries, no secret anywhere."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from crawl_assets.orchestration.partition_state import load_checkpoint
from crawl_assets.lake import Lake
from crawl_assets.registry import SourceStatus, load_registry, update_registry
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.sources.telegram.resource import TelegramResource
from crawl_assets_tests.sources.telegram.conftest import SESSION, entry, make_resource
from crawl_assets_tests.fakes import FAKE_API_HASH

KEY = dg.AssetKey(["telegram", "telegram_messages_raw"])


@pytest.fixture
def setup(tmp_path: Path, world, monkeypatch):
    from crawl_assets.orchestration.assets import raw_asset

    telegram_messages_raw = raw_asset("telegram")

    registry = tmp_path / "sources.yaml"
    sources = [entry("alpha", "@alpha"), entry("beta", "@beta", refresh_window=100), entry("hidden", "@hidden")]
    update_registry(registry, lambda reg: [reg.add(s) for s in sources])
    world.channel("alpha", messages=700)
    world.channel("beta", messages=350)
    world.channel("hidden", messages=50, private=True)
    # secrets only through EnvVar, as in production (TelegramResource.from_env)
    monkeypatch.setenv("CRAWL_TELEGRAM_API_ID", "12345")
    monkeypatch.setenv("CRAWL_TELEGRAM_API_HASH", FAKE_API_HASH)
    monkeypatch.setenv("CRAWL_TELEGRAM_SESSION", SESSION)
    standin = make_resource(tmp_path, flood_sleep_threshold_seconds=1, flood_retries=1)
    telegram = TelegramResource(**{**dict(standin), "credentials": TelegramResource.from_env().credentials})
    resources = {
        "lake": LakeResource(root=str(tmp_path / "lake")),
        "registry": RegistryResource(path=str(registry)),
        "telegram": telegram,
    }
    return telegram_messages_raw, resources, registry, Lake(str(tmp_path / "lake"))


def _materialize(asset, resources, instance, key, **kw):
    return dg.materialize([asset], resources=resources, partition_key=key, instance=instance, **kw)


def test_two_partitions_materialize_with_checkpoints_and_metadata(setup):
    asset, resources, _, lake = setup
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("telegram_sources", ["default.telegram.alpha", "default.telegram.beta"])
        for key, total in (("default.telegram.alpha", 700), ("default.telegram.beta", 350)):
            result = _materialize(asset, resources, instance, key)
            assert result.success
            meta = result.asset_materializations_for_node("telegram__telegram_messages_raw")[0].metadata
            assert meta["records_new"].value == total
            assert meta["history_complete"].value is True
            assert meta["requests"].value > 0 and meta["rate_limit_wait_seconds"].value == 0
            assert meta["batches_written"].value >= 2
            state = load_checkpoint(instance, KEY, key)
            assert state["newest_id"] == total and state["oldest_id"] == 1
        # a second run of one partition resumes from the instance's checkpoint: nothing new
        again = _materialize(asset, resources, instance, "default.telegram.alpha")
        meta = again.asset_materializations_for_node("telegram__telegram_messages_raw")[0].metadata
        assert meta["records_new"].value == 0 and meta["batches_written"].value == 0

        # the session string is nowhere: run config, tags, event log, lake
        for run in instance.get_runs():
            assert SESSION not in str(run.run_config) and SESSION not in str(run.tags)
            for log in instance.all_logs(run.run_id):
                assert SESSION not in str(log)
        for path in Path(lake.root).rglob("*"):
            if path.is_file():
                assert SESSION.encode() not in path.read_bytes()


def test_private_channel_pauses_its_source_only(setup):
    asset, resources, registry, _ = setup
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("telegram_sources", ["default.telegram.hidden", "default.telegram.beta"])
        failed = _materialize(asset, resources, instance, "default.telegram.hidden", raise_on_error=False)
        assert not failed.success
        hidden = load_registry(registry).get("default.telegram.hidden")
        assert hidden.status is SourceStatus.paused and "private" in (hidden.status_reason or "")
        ok = _materialize(asset, resources, instance, "default.telegram.beta")
        assert ok.success
        assert load_registry(registry).get("default.telegram.beta").status is SourceStatus.active


def test_long_flood_wait_becomes_a_step_retry_after_the_server_wait(setup, world):
    asset, resources, _, _ = setup
    world.fail("GetHistoryRequest", "FLOOD_WAIT_2", after=3)  # threshold is 1 s: not slept in place
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("telegram_sources", ["default.telegram.alpha"])
        result = _materialize(asset, resources, instance, "default.telegram.alpha")
        assert result.success
        retries = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_UP_FOR_RETRY]
        assert len(retries) == 1 and retries[0].event_specific_data.seconds_to_wait == 2
        state = load_checkpoint(instance, KEY, "default.telegram.alpha")
        assert state["history_complete"] and state["newest_id"] == 700 and state["oldest_id"] == 1
