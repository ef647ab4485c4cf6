"""``hackernews_items_raw`` in Dagster (the fourth source's asset, wired only by its spec)."""

from __future__ import annotations

import dagster as dg

from crawl_assets.orchestration.assets import raw_asset
from crawl_assets.core import catalog
from crawl_assets.sdk.rest_resource import RestSourceResource, resource_class, source_resource
from crawl_assets_tests.sources.feedback_helpers import materialization_metadata, run_raw_asset
from crawl_assets_tests.sources.hackernews.standin import HackerNewsServer, make_items

hackernews_items_raw = raw_asset("hackernews")

REGISTRY = """sources:
  - {name: tool, tenant: acme, platform: hackernews, kind: search_query, identifier: "feedback tool"}
"""


def test_spec_declares_everything_definitions_needs():
    spec = catalog.spec("hackernews")
    assert hackernews_items_raw.key == dg.AssetKey(["hackernews", spec.raw_asset])
    resource = source_resource(spec)
    assert isinstance(resource, RestSourceResource) and resource.ENV == "CRAWL_HACKERNEWS" and not resource.secrets


def test_materialize(tmp_path):
    with HackerNewsServer(items=make_items(3, 4)) as srv, dg.instance_for_test() as instance:
        result = run_raw_asset(hackernews_items_raw, tmp_path=tmp_path, registry_yaml=REGISTRY,
                               partition="acme.hackernews.tool",
                               resources={"hackernews": resource_class(catalog.spec("hackernews"))(base_url=srv.url)}, instance=instance)
        meta = materialization_metadata(result)
    assert meta["records_new"] == 15 and meta["complete"] is True and meta["batches_written"] == 1
