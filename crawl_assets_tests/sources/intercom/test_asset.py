"""``intercom_conversations_raw`` in Dagster: metadata, checkpoint, normalization of what it stored, and
a revoked token pausing only its own source."""

from __future__ import annotations

import dagster as dg

from crawl_assets.orchestration.partition_state import load_checkpoint
from crawl_assets.lake import Lake
from crawl_assets.normalize import NormalizeContext, normalize_stream
from crawl_assets.registry import load_registry
from crawl_assets.schema.record import Rejection
from crawl_assets.orchestration.assets import raw_asset
from crawl_assets.sources.intercom.resource import IntercomResource
from crawl_assets.sdk.tenant_secrets import TenantSecret
from crawl_assets_tests.sources.feedback_helpers import materialization_metadata, run_raw_asset

intercom_conversations_raw = raw_asset("intercom")

REGISTRY = """sources:
  - {name: support, tenant: acme, platform: intercom, kind: workspace, identifier: wsa, credential: main,
     options: {per_page: 10}}
  - {name: revoked, tenant: acme, platform: intercom, kind: workspace, identifier: wsr, credential: old}
"""


def _resource(server) -> IntercomResource:
    return IntercomResource(base_url=server.url, backoff_seconds=0.01, secrets=[
        TenantSecret(tenant="acme", name="main", value="tok-a"), TenantSecret(tenant="acme", name="old", value="tok-old")])


def test_materialize_stores_checkpoints_and_normalizes(tmp_path, server, conversations):
    with dg.instance_for_test() as instance:
        result = run_raw_asset(intercom_conversations_raw, tmp_path=tmp_path, registry_yaml=REGISTRY,
                               partition="acme.intercom.support", resources={"intercom": _resource(server)}, instance=instance)
        meta = materialization_metadata(result)
        state = load_checkpoint(instance, intercom_conversations_raw.key, "acme.intercom.support")
    assert meta["records_new"] == 30 and meta["complete"] is True and meta["requests"] == 33
    assert meta["batches_written"] == 2 and meta["checkpoints_saved"] == 2 and meta["http_429"] == 0
    assert state["updated_after"] == conversations[-1]["updated_at"]
    lake = Lake(str(tmp_path / "lake"))
    records = rejections = 0
    for batch in lake.raw_batches("acme", "intercom", "acme.intercom.support"):
        assert batch.manifest.format == "intercom"
        with lake.open_raw(batch) as fh:
            for item in normalize_stream("intercom", fh, name=batch.path, context=NormalizeContext(tenant="acme")):
                if isinstance(item, Rejection):
                    assert not item.error, item
                    rejections += 1
                else:
                    records += 1
    assert records > 60 and rejections == 30


def test_a_revoked_token_pauses_only_its_source_and_leaks_nothing(tmp_path, server):
    with dg.instance_for_test() as instance:
        result = run_raw_asset(intercom_conversations_raw, tmp_path=tmp_path, registry_yaml=REGISTRY,
                               partition="acme.intercom.revoked", resources={"intercom": _resource(server)},
                               instance=instance, raise_on_error=False)
        assert not result.success
        logs = " ".join(str(e.message) for e in instance.all_logs(result.run_id))
    registry = load_registry(tmp_path / "sources.yaml")
    assert registry.get("acme.intercom.revoked").paused and "401" in registry.get("acme.intercom.revoked").status_reason
    assert not registry.get("acme.intercom.support").paused
    assert "tok-old" not in logs
