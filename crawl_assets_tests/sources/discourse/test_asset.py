"""``discourse_posts_raw`` in Dagster, with the resource built from the environment as Definitions does."""

from __future__ import annotations

import dagster as dg

from crawl_assets.orchestration.assets import raw_asset


discourse_posts_raw = raw_asset("discourse")
from crawl_assets.core import catalog
from crawl_assets.sdk.rest_resource import source_resource
from crawl_assets_tests.sources.feedback_helpers import materialization_metadata, run_raw_asset
from crawl_assets_tests.standins.discourse_api import DiscourseServer, build_forum

REGISTRY = """sources:
  - {name: community, tenant: acme, platform: discourse, kind: forum, identifier: "https://forum.example.org",
     credential: bot, options: {api_username: crawler}}
"""


def test_private_forum_with_tenant_key_from_env(tmp_path, monkeypatch):
    with DiscourseServer(forum=build_forum(topics=3, replies=10), api_keys={"acme-key"}) as srv:
        monkeypatch.setenv("CRAWL_DISCOURSE_BASE_URL", srv.url)
        monkeypatch.setenv("CRAWL_DISCOURSE_API_KEY__ACME__BOT", "acme-key")
        with dg.instance_for_test() as instance:
            result = run_raw_asset(discourse_posts_raw, tmp_path=tmp_path, registry_yaml=REGISTRY,
                                   partition="acme.discourse.community",
                                   resources={"discourse": source_resource(catalog.spec("discourse"))}, instance=instance)
            meta = materialization_metadata(result)
        assert {e.status for e in srv.log} == {200}
    assert meta["complete"] is True and meta["records_new"] == 30 and meta["newest_id"] == 30
    assert meta["topics_fetched"] == 3
