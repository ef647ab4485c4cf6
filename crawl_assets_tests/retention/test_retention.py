"""Retention with an advanced clock: raw, normalized parts and monthly indices expire per tenant;
other tenants keep everything; the asset applies it from ``retention.yaml``."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from importlib import resources

import dagster as dg
import pytest

from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
from crawl_assets.index.sink import index_documents
from crawl_assets.lake import Lake
from crawl_assets.lake.layout import new_batch_id
from crawl_assets.orchestration.resources import LakeResource
from crawl_assets.retention import load_policy
from crawl_assets_tests.es_node.fixtures import EsCluster

T0 = datetime(2026, 1, 10, tzinfo=timezone.utc)
PAGES = [line for line in (resources.files("crawl_assets") / "sample_data" / "x_v2_recording.jsonl")
         .read_bytes().splitlines() if line.strip()]


def _batch(lake: Lake, tenant: str, when: datetime, seq: int) -> str:
    source = f"{tenant}.x.feed"
    batch_id = new_batch_id("ret", seq, now=when)
    batch = lake.write_raw_batch(tenant=tenant, platform="x", source=source, batch_id=batch_id, fmt="x-v2",
                                 method="api", run_id="ret", lines=PAGES[seq:seq + 1], collected_at=when)
    normalize_batch(lake, batch, lake.table_part(TABLE, tenant, "x", source, batch_id))
    return batch_id


@pytest.fixture
def world(tmp_path, es_cluster: EsCluster):
    lake = Lake(str(tmp_path / "lake"))
    ids = {t: [_batch(lake, t, T0, 0), _batch(lake, t, T0 + timedelta(days=100), 1)] for t in ("acme", "beta")}
    (tmp_path / "retention.yaml").write_text(
        "tenants:\n  acme: {raw_days: 30, normalized_days: 90, index_months: 2}\n")
    es, client = es_cluster, es_cluster.client
    for tenant in ("acme", "beta"):
        docs = [{"key": f"x:{m}", "tenant": tenant, "source": f"{tenant}.x.feed", "platform": "x",
                 "created_at": f"2026-{m:02d}-05T00:00:00Z"} for m in (1, 2, 3, 4)]
        index_documents(client, docs, family="records", tenant=tenant, deadletter_root=str(tmp_path / "dl"))
    yield lake, ids, es, client, tmp_path / "retention.yaml"


def _state(lake: Lake, tenant: str) -> tuple[list[str], list[str]]:
    raw = [b.manifest.batch_id for b in lake.raw_batches(tenant, "x", f"{tenant}.x.feed")]
    parts = [b for b, _ in lake.read_parts(TABLE, tenant, "x", f"{tenant}.x.feed")]
    return raw, parts


def _months(es: EsCluster, tenant: str) -> list[str]:
    names = es.client.indices.get_alias(index=f"crawl-records-{tenant}.*", allow_no_indices=True)
    return sorted(n.split(".", 1)[1] for n in names)


def _run(lake: Lake, es: EsCluster, policy, now: datetime) -> dg.MaterializeResult:
    from crawl_assets.orchestration.assets.retention import retention

    # A disposed instance per run: an ephemeral one left Dagster's process-wide defs-state storage
    # pointing at a dead instance for the next run ("Attempted to resolve undefined DagsterInstance weakref").
    with dg.instance_for_test() as instance:
        result = dg.materialize([retention], instance=instance,
                                resources={"lake": LakeResource(root=lake.root),
                                           "elasticsearch": es.resource()},
                                run_config={"ops": {"retention": {"config": {"now": now.isoformat(),
                                                                             "policy_path": str(policy)}}}})
    assert result.success
    return result


def test_clock_advances_through_the_policy(world):
    lake, ids, es, _, policy = world
    old, new = ids["acme"]
    _run(lake, es, policy, T0 + timedelta(days=20))  # nothing is old enough yet
    assert _state(lake, "acme") == ([old, new], [old, new])

    _run(lake, es, policy, T0 + timedelta(days=45))  # raw of the first batch expired, its records stay
    assert _state(lake, "acme") == ([new], [old, new])

    _run(lake, es, policy, T0 + timedelta(days=95))  # now its normalized part too
    assert _state(lake, "acme") == ([new], [new])
    assert lake.part_ids("relation_edges", "acme", "x", "acme.x.feed") == [new], "edge files follow the parts"

    _run(lake, es, policy, datetime(2026, 4, 20, tzinfo=timezone.utc))  # keep 2 months: March and April
    assert _months(es, "acme") == ["2026.03", "2026.04"]
    assert _state(lake, "beta") == (ids["beta"], ids["beta"]), "a tenant without a policy keeps everything"
    assert _months(es, "beta") == ["2026.01", "2026.02", "2026.03", "2026.04"]


def test_retention_also_expires_landed_webhook_events_and_dead_letters(world):
    """Every area holding raw observations or copies of records expires with the policy (issue 15)."""
    from crawl_assets.lake.layout import DEADLETTER_PENDING as PENDING
    from crawl_assets.lake.landing import land_event, landed_events

    lake, _, es, _, policy = world
    for tenant in ("acme", "beta"):
        land_event(lake, tenant=tenant, platform="intercom", source=f"{tenant}.intercom.s", body=b"{}", received_at=T0)
        lake.write_bytes(f"{PENDING}/records/{tenant}/20260110T000000Z-run-ab12.jsonl", b'{"doc": {}}\n')
    _run(lake, es, policy, T0 + timedelta(days=45))  # acme: raw (landing) expired, dead letters not yet
    assert {e.tenant for e in landed_events(lake)} == {"beta"}
    assert lake.exists(f"{PENDING}/records/acme/20260110T000000Z-run-ab12.jsonl")
    _run(lake, es, policy, T0 + timedelta(days=95))
    assert not lake.exists(f"{PENDING}/records/acme/20260110T000000Z-run-ab12.jsonl")
    assert lake.exists(f"{PENDING}/records/beta/20260110T000000Z-run-ab12.jsonl"), "no policy: kept"


def test_policy_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "retention.yaml"
    bad.write_text("tenants:\n  acme: {raw_days: 0}\n")
    with pytest.raises(ValueError, match="retention.yaml"):
        load_policy(bad)
    assert load_policy(tmp_path / "missing.yaml").tenants == {}


def test_raw_never_outlives_normalized():
    from crawl_assets.retention import TenantRetention

    assert TenantRetention(raw_days=400, normalized_days=90).raw_expiry_days == 90
    assert TenantRetention().raw_expiry_days is None


def test_retention_runs_on_a_schedule():
    from crawl_assets.orchestration.assets.retention import retention_schedule

    assert retention_schedule.cron_schedule == "30 3 * * *" and retention_schedule.job_name == "retention_job"
