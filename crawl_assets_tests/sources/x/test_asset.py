"""``x_posts_raw`` in Dagster: a partition per source, the checkpoint as an observation, run metadata,
permanent errors pausing only their source, RetryRequested after a long reset, and x-archive exports."""

from __future__ import annotations

import dagster as dg
import orjson
import pytest

from crawl_assets.orchestration.partition_state import load_checkpoint
from crawl_assets.lake import Lake
from crawl_assets.registry import load_registry
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.sdk.exports import tenant_import_root
from crawl_assets.orchestration.assets import raw_asset
from crawl_assets.sdk.tenant_secrets import TenantSecret
from crawl_assets.sources.x.resource import XResource

x_posts_raw = raw_asset("x")

REGISTRY = """sources:
  - name: tl
    tenant: acme
    platform: x
    kind: account_timeline
    identifier: data_eng
    options: {complete_threads: true, max_results: 50}
  - name: gone
    tenant: acme
    platform: x
    kind: account_timeline
    identifier: no_such_account
  - name: badquery
    tenant: acme
    platform: x
    kind: search_query
    identifier: "python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR python OR "
  - name: archive
    tenant: acme
    platform: x
    kind: export_file
    identifier: tweets.js
    options: {format: x-archive}
"""

TWEETS_JS = """window.YTD.tweets.part0 = [
  {"tweet": {"id_str": "1780000000000000000", "id": "1780000000000000000", "full_text": "سلام دنیا #خبر",
             "created_at": "Wed Apr 17 06:00:00 +0000 2024", "lang": "fa", "favorite_count": "3", "retweet_count": "1",
             "entities": {"hashtags": [{"text": "خبر", "indices": ["10", "14"]}], "user_mentions": [], "urls": []}}},
  {"tweet": {"id_str": "1780000000000000001", "id": "1780000000000000001", "full_text": "@someone a reply in English",
             "created_at": "Wed Apr 17 07:00:00 +0000 2024", "lang": "en", "in_reply_to_status_id_str": "1770000000000000000",
             "in_reply_to_screen_name": "someone", "favorite_count": "0", "retweet_count": "0",
             "entities": {"hashtags": [], "user_mentions": [{"screen_name": "someone", "id_str": "42", "indices": ["0", "8"]}], "urls": []}}}
]
"""


@pytest.fixture
def setup(tmp_path, server):
    registry = tmp_path / "sources.yaml"
    registry.write_text(REGISTRY)
    (acme := tenant_import_root("acme")).mkdir(parents=True)
    (acme / "tweets.js").write_text(TWEETS_JS, encoding="utf-8")
    resources = {
        "lake": LakeResource(root=str(tmp_path / "lake")),
        "registry": RegistryResource(path=str(registry)),
        "x": XResource(base_url=server.url, secrets=[TenantSecret(tenant="acme", value="test-token")], backoff_seconds=0.01, max_retries=1,
                       reset_margin_seconds=0.05, max_inline_wait_seconds=0.5),
    }
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("x_sources", ["acme.x.tl", "acme.x.gone", "acme.x.badquery", "acme.x.archive"])
        yield instance, resources, Lake(str(tmp_path / "lake")), registry


def materialize(instance, resources, key, **kwargs):
    return dg.materialize([x_posts_raw], resources=resources, partition_key=key, instance=instance, **kwargs)


def meta_of(result):
    mats = result.asset_materializations_for_node("x__x_posts_raw")
    return {k: v.value for k, v in mats[0].metadata.items()}


def test_materialize_saves_checkpoint_and_reports(setup, server):
    instance, resources, lake, _ = setup
    result = materialize(instance, resources, "acme.x.tl")
    assert result.success
    meta = meta_of(result)
    state = load_checkpoint(instance, x_posts_raw.key, "acme.x.tl")
    assert state["newest_id"] and state["user"]["username"] == "data_eng" and state["pass"] is None
    assert meta["records_new"] > 0 and meta["batches_written"] >= 1
    assert meta["requests"] == sum(server.counts().values())
    assert meta["complete"] is True and meta["newest_event_lag_hours"] >= 0 and meta["rate_limit_wait_seconds"] == 0
    assert meta["parents_found"] > 0, "complete_threads is on for this source"
    batches = lake.raw_batches("acme", "x", "acme.x.tl")
    assert {b.manifest.format for b in batches} == {"x-v2"} and {b.manifest.method for b in batches} == {"api"}
    assert all("test-token" not in orjson.dumps(b.manifest.extra).decode() for b in batches)
    normalize = pytest.importorskip("crawl_assets.normalize")
    from crawl_assets.schema import Rejection

    for batch in batches:
        with lake.open_raw(batch) as fh:
            items = list(normalize.normalize_stream("x-v2", fh, name=batch.path,
                                                    context=normalize.NormalizeContext(tenant="acme", source="acme.x.tl")))
        assert items and not [i for i in items if isinstance(i, Rejection)]

    server.clear_log()
    again = meta_of(materialize(instance, resources, "acme.x.tl"))
    assert again["requests"] == 1 and again["batches_written"] == 0 and again["records_new"] == 0


def test_permanent_error_pauses_only_that_source(setup, server):
    instance, resources, _, registry = setup
    failed = materialize(instance, resources, "acme.x.gone", raise_on_error=False)
    assert not failed.success
    entry = load_registry(registry).get("acme.x.gone")
    assert entry.paused and "Could not find user" in entry.status_reason
    assert not load_registry(registry).get("acme.x.tl").paused
    assert materialize(instance, resources, "acme.x.tl").success, "the other source still syncs"
    assert not materialize(instance, resources, "acme.x.badquery", raise_on_error=False).success
    reason = load_registry(registry).get("acme.x.badquery").status_reason
    assert "X refused the request" in reason and "512 characters" in reason
    assert server.counts()["search/recent"] == 1, "an invalid query is not retried"


def test_long_rate_limit_wait_ends_the_step_with_retry_requested(setup, server):
    instance, resources, _, _ = setup
    server.set_limit("users/tweets", 1, 1.0)  # the next page needs a wait longer than the 0.5 s allowed in place
    result = materialize(instance, resources, "acme.x.tl", raise_on_error=False)
    events = [e.event_type_value for e in result.all_events]
    assert "STEP_UP_FOR_RETRY" in events
    assert result.success, "the retried step resumed from the checkpoint once the window reset"
    assert server.statuses()[429] == 0
    tokens = [r.params.get("pagination_token") for r in server.log if r.endpoint == "users/tweets" and r.status == 200]
    assert len(tokens) == len(set(tokens)), "the retry did not fetch a page twice"


def test_x_archive_export_runs_through_the_raw_asset(setup):
    normalize = pytest.importorskip("crawl_assets.normalize")
    from crawl_assets.schema import Rejection

    instance, resources, lake, _ = setup
    result = materialize(instance, resources, "acme.x.archive")
    assert result.success and meta_of(result)["batches_written"] == 1
    [batch] = lake.raw_batches("acme", "x", "acme.x.archive")
    assert batch.manifest.format == "x-archive"
    with lake.open_raw(batch) as fh:
        items = list(normalize.normalize_stream("x-archive", fh, name=batch.path,
                                                context=normalize.NormalizeContext(tenant="acme", source="acme.x.archive")))
    assert not [i for i in items if isinstance(i, Rejection)]
    assert [i.kind for i in items] == ["post", "reply"]
    assert meta_of(materialize(instance, resources, "acme.x.archive"))["batches_written"] == 0, "same file: stored once"
