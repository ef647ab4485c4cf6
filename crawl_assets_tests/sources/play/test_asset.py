"""``play_reviews_raw`` in Dagster: the gap flag and warning after a late sync, a too-slow cadence pausing
the source (a configuration error), and the Play Console CSV export as an export_file source."""

from __future__ import annotations

from datetime import timedelta

import dagster as dg
import orjson

from crawl_assets.lake import Lake
from crawl_assets.normalize import NormalizeContext, normalize_stream
from crawl_assets.registry import load_registry
from crawl_assets.schema.record import Record
from crawl_assets.orchestration.assets import raw_asset
from crawl_assets.sources.play.resource import PlayResource
from crawl_assets.sdk.tenant_secrets import TenantSecret
from crawl_assets_tests.sources.feedback_helpers import materialization_metadata, run_raw_asset
from crawl_assets_tests.sources.play.test_sync import NOW, PACKAGE, server  # noqa: F401 - fixture
from crawl_assets.sdk.exports import tenant_import_root

play_reviews_raw = raw_asset("play")

REGISTRY = f"""sources:
  - {{name: app, tenant: acme, platform: play, kind: app, identifier: {PACKAGE}, credential: main,
     policy: {{interval_minutes: 360}}, options: {{max_results: 20}}}}
  - {{name: slow, tenant: acme, platform: play, kind: app, identifier: {PACKAGE}, credential: main,
     policy: {{interval_minutes: 20160}}}}
  - {{name: history, tenant: acme, platform: play, kind: export_file, identifier: reviews.csv, options: {{format: play-csv}}}}
"""


def _resource(server) -> PlayResource:  # noqa: F811
    key = server.register("sa@acme.iam")
    return PlayResource(base_url=server.url, backoff_seconds=0.01,
                        secrets=[TenantSecret(tenant="acme", name="main", value=orjson.dumps(key).decode())])


def test_a_late_sync_is_flagged_in_metadata_and_logs(tmp_path, server):  # noqa: F811
    with dg.instance_for_test() as instance:
        instance.report_runless_asset_event(dg.AssetObservation(
            asset_key=play_reviews_raw.key, partition="acme.play.app",
            metadata={"checkpoint": dg.MetadataValue.json({"last_complete_at": (NOW - timedelta(days=10)).isoformat()})}))
        result = run_raw_asset(play_reviews_raw, tmp_path=tmp_path, registry_yaml=REGISTRY, partition="acme.play.app",
                               resources={"play": _resource(server)}, instance=instance)
        meta = materialization_metadata(result)
        warnings = [e.message for e in instance.all_logs(result.run_id) if "may be missing" in str(e.message)]
    assert meta["gap_detected"] is True and meta["gap_seconds"] > 2.9 * 86400 and meta["records_fetched"] == 34
    assert warnings


def test_a_too_slow_cadence_pauses_without_retry(tmp_path, server):  # noqa: F811
    """A configuration error, handled like the others (missing credential, bad option): the source is
    paused with the reason, and no request is made."""
    with dg.instance_for_test() as instance:
        result = run_raw_asset(play_reviews_raw, tmp_path=tmp_path, registry_yaml=REGISTRY, partition="acme.play.slow",
                               resources={"play": _resource(server)}, instance=instance, raise_on_error=False)
    assert not result.success and server.counts()["reviews.list"] == 0
    entry = load_registry(tmp_path / "sources.yaml").get("acme.play.slow")
    assert entry.paused and "interval" in (entry.status_reason or "")


def test_console_export_is_an_export_file_source(tmp_path, server):  # noqa: F811
    (acme := tenant_import_root("acme")).mkdir(parents=True)
    (acme / "reviews.csv").write_bytes((__import__("pathlib").Path(__file__).parent / "golden" / "export.csv").read_bytes())
    with dg.instance_for_test() as instance:
        run_raw_asset(play_reviews_raw, tmp_path=tmp_path, registry_yaml=REGISTRY, partition="acme.play.history",
                      resources={"play": _resource(server)}, instance=instance)
    lake = Lake(str(tmp_path / "lake"))
    [batch] = lake.raw_batches("acme", "play", "acme.play.history")
    with lake.open_raw(batch) as fh:
        items = list(normalize_stream("play-csv", fh, name=batch.path, context=NormalizeContext(tenant="acme")))
    assert sum(isinstance(i, Record) for i in items) == 3


def test_developer_replies_become_reply_relations(tmp_path, server):  # noqa: F811
    from crawl_assets.orchestration.assets import derived_assets
    from crawl_assets.orchestration.resources import LakeResource, RegistryResource

    (tmp_path / "sources.yaml").write_text(REGISTRY)
    normalized, edges, _ = derived_assets("play", play_reviews_raw)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("play_sources", ["acme.play.app"])
        dg.materialize([play_reviews_raw, normalized, edges], partition_key="acme.play.app", instance=instance,
                       resources={"lake": LakeResource(root=str(tmp_path / "lake")),
                                  "registry": RegistryResource(path=str(tmp_path / "sources.yaml")),
                                  "play": _resource(server)})
    lake = Lake(str(tmp_path / "lake"))
    rows = [r for _, t in lake.read_parts("relation_edges", "acme", "play", "acme.play.app") for r in t.to_pylist()]
    replies = [r for r in rows if r["type"] == "reply"]
    assert len(replies) == 18
    assert all(r["src"] == r["dst"] + ":reply" and r["dst"].startswith(f"play:{PACKAGE}:gp:") for r in replies)
