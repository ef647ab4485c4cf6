"""Landed events become one sync run per live source; the cursor moves past them; skips are logged."""

from __future__ import annotations

import dagster as dg

from crawl_assets.lake import Lake
from crawl_assets.lake.landing import land_event, landed_events
from crawl_assets.resources.lake import LakeResource, RegistryResource
from crawl_assets.sensors.webhook_sensor import webhook_events_sensor
from crawl_assets_tests.webhooks.conftest import REGISTRY


def _evaluate(tmp_path, cursor=None):
    registry = tmp_path / "sources.yaml"
    if not registry.exists():
        registry.write_text(REGISTRY)
    with dg.instance_for_test() as instance:
        context = dg.build_sensor_context(instance=instance, cursor=cursor, resources={
            "lake": LakeResource(root=str(tmp_path / "lake")), "registry": RegistryResource(path=str(registry))})
        return webhook_events_sensor(context)


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
