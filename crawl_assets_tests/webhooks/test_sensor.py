"""Landed events become one sync run per live source; the cursor moves past them; skips are logged."""

from __future__ import annotations

import dagster as dg

from crawl_assets.lake import Lake
from crawl_assets.lake.landing import land_event, landed_events
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.orchestration.jobs import build_sync_job
from crawl_assets.orchestration.sensors.webhook_sensor import build_webhook_sensor
from crawl_assets.orchestration.assets import raw_asset
from crawl_assets_tests.webhooks.conftest import REGISTRY

SENSOR = build_webhook_sensor({"intercom": build_sync_job("intercom", raw_asset("intercom")),
                               "discourse": build_sync_job("discourse", raw_asset("discourse"))})


def _evaluate(tmp_path, cursor=None):
    registry = tmp_path / "sources.yaml"
    if not registry.exists():
        registry.write_text(REGISTRY)
    with dg.instance_for_test() as instance:
        context = dg.build_sensor_context(instance=instance, cursor=cursor, resources={
            "lake": LakeResource(root=str(tmp_path / "lake")), "registry": RegistryResource(path=str(registry))})
        return SENSOR(context)


def _land(lake, tenant, platform, name, topic="conversation.user.replied"):
    return land_event(lake, tenant=tenant, platform=platform, source=f"{tenant}.{platform}.{name}", body=b'{"x":1}',
                      topic=topic)


def test_events_become_one_run_per_source_and_the_cursor_moves(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    for _ in range(3):
        _land(lake, "acme", "intercom", "support")
    _land(lake, "globex", "intercom", "support")
    last = _land(lake, "acme", "discourse", "forum", topic="post_created")
    result = _evaluate(tmp_path)
    runs = {r.partition_key: r for r in result.run_requests}
    assert set(runs) == {"acme.intercom.support", "globex.intercom.support", "acme.discourse.forum"}
    assert runs["acme.intercom.support"].job_name == "intercom_sync"
    assert runs["acme.intercom.support"].tags["crawl/webhook_events"] == "3"
    assert runs["globex.intercom.support"].tags["crawl/tenant"] == "globex"
    assert runs["acme.discourse.forum"].job_name == "discourse_sync"
    assert result.cursor == last.event_id
    again = _evaluate(tmp_path, cursor=result.cursor)
    assert isinstance(again, dg.SkipReason)


def test_pings_paused_and_unknown_sources_start_no_run(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    _land(lake, "acme", "intercom", "support", topic="ping")
    _land(lake, "acme", "intercom", "old")  # paused in the registry
    _land(lake, "acme", "intercom", "gone")  # not registered
    result = _evaluate(tmp_path)
    assert result.run_requests == []
    assert result.cursor == landed_events(lake)[-1].event_id  # handled, not re-read forever


def test_the_sensor_loads_in_definitions_with_the_sync_jobs_it_targets():
    from crawl_assets.orchestration.assets import derived_assets
    from crawl_assets.orchestration.resources import ElasticsearchResource
    from crawl_assets.core import catalog
    from crawl_assets.sources.intercom.resource import IntercomResource
    from crawl_assets.sdk.rest_resource import resource_class

    assets = [a for platform in ("intercom", "discourse") for a in (raw_asset(platform), *derived_assets(platform, raw_asset(platform)))]
    defs = dg.Definitions(assets=assets, sensors=[SENSOR], resources={
        "lake": LakeResource(), "registry": RegistryResource(), "elasticsearch": ElasticsearchResource(),
        "intercom": IntercomResource(), "discourse": resource_class(catalog.spec("discourse"))()})
    dg.Definitions.validate_loadable(defs)
    assert {job.name for job in defs.resolve_all_job_defs()} >= {"intercom_sync", "discourse_sync"}
