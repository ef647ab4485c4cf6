"""End to end with the real services: dagster-daemon + dagster-webserver on a Postgres instance, both reaching
one code server over gRPC as docker-compose.yml deploys them, X sources served by the v2 stand-in, the index
on the real Elasticsearch node (the daemon's backfill loop every 2 s instead of 30 s: ``daemon.py``).

1. the sensors turn the registry into partitions and sync every source (batch runs);
2. new posts arrive and the sources fall due: the scheduler runs an incremental sync;
3. a backfill launched through GraphQL (``launchPartitionBackfill``) re-syncs one source; its run worker
   is SIGKILLed mid-sync after a checkpoint; the run retry resumes from that checkpoint;
4. the lake and the index equal those of one uninterrupted in-process sync of the same sources.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from crawl_assets.orchestration.assets import derived_assets, raw_asset
from crawl_assets.orchestration.assets.enrichment import AUTOMATION_SENSOR
from crawl_assets.orchestration.partition_state import load_checkpoint
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.orchestration.monitoring.health import load_health, save_health
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.sdk.tenant_secrets import TenantSecret
from crawl_assets.sources.x.resource import XResource
from crawl_assets.orchestration.monitoring.inflight import ACTIVE_STATUSES
from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.e2e.services import Services, wait_for
from crawl_assets_tests.es_node.fixtures import EsCluster
from crawl_assets_tests.es_node.inspect import sources
from crawl_assets_tests.orchestration.conftest import x_registry
from crawl_assets_tests.standins.x_api import XAPIServer
from crawl_assets_tests.standins.x_corpus import build_corpus

x_posts_raw = raw_asset("x")

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SOURCES = {"news": "persian_news", "eng": "data_eng", "dev": "shiraz_dev"}
KEYS = [f"acme.x.{n}" for n in SOURCES]
RAW = dg.AssetKey(["x", "x_posts_raw"])
CHAIN = [["x", "x_posts_raw"], ["x", "normalized_records"], ["x", "relation_edges"], ["x", "search_index"]]
BACKFILL = """mutation($p: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $p) {
  __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message stack } } }"""
SENSOR = """query($s: SensorSelector!) { sensorOrError(sensorSelector: $s) {
  __typename ... on Sensor { id sensorState { status } } ... on PythonError { message } } }"""
STOP_SENSOR = """mutation($id: String!) { stopSensor(id: $id) {
  __typename ... on StopSensorMutationResult { instigationState { status } } ... on PythonError { message } } }"""
BACKFILL_STATUS = """query($id: String!) { partitionBackfillOrError(backfillId: $id) {
  __typename ... on PartitionBackfill { status } } }"""
TEST_QUEUE = """
run_coordinator:
  module: dagster._core.run_coordinator
  class: QueuedRunCoordinator
  config:
    dequeue_interval_seconds: 1
"""
PID = re.compile(r"Started process for run \(pid: (\d+)\)")


def _latest_records(lake: Lake) -> dict[str, tuple[Any, ...]]:
    """Normalized records of all sources, latest observation per key, without collection provenance."""
    out: dict[str, tuple[Any, ...]] = {}
    for key in KEYS:
        for _, table in lake.read_parts("normalized_records", "acme", "x", key):
            for row in arrow_to_records(table):
                out[row["key"]] = (row["source"], row["text"], str(row["created_at"]), row["kind"], row["reply_to"],
                                   row["deleted"])
    return out


def _indexed(es: EsCluster) -> dict[str, tuple[Any, ...]]:
    return {i: (d["source"], d["text"], d.get("deleted")) for i, d in sources(es.client, "crawl-records-acme").items()}


def _runs(instance: dg.DagsterInstance, **filters: Any) -> list[dg.DagsterRun]:
    return list(instance.get_runs(dg.RunsFilter(**filters)))


def _reference(tmp: Path, corpus_server: XAPIServer, registry: Path, es: EsCluster) -> tuple[dict, dict]:
    """One uninterrupted in-process sync of every source, into its own lake and the emptied index."""
    lake_dir = tmp / "reference_lake"
    es.wipe()
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("x_sources", KEYS)
        resources = {
            "lake": LakeResource(root=str(lake_dir)), "registry": RegistryResource(path=str(registry)),
            "x": XResource(base_url=corpus_server.url, secrets=[TenantSecret(tenant="acme", value="test-token")]),
            "elasticsearch": es.resource(),
        }
        chain = [x_posts_raw, *derived_assets("x", x_posts_raw)]
        for key in KEYS:
            result = dg.materialize(chain, partition_key=key, resources=resources, instance=instance)
            assert result.success
        return _latest_records(Lake(str(lake_dir))), _indexed(es)


@pytest.fixture
def stack(tmp_path, pg_url, monkeypatch, es_cluster):
    """Stand-ins, registry, environment and the two Dagster services on a fresh Postgres database."""
    corpus = build_corpus(300, days=5)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    shutil.copyfile(REPO / "dagster.yaml", home / "dagster.yaml")
    with (home / "dagster.yaml").open("a") as fh:  # test only: dequeue every second instead of every 5 s
        fh.write(TEST_QUEUE)
    registry = x_registry(tmp_path / "sources.yaml", SOURCES)
    text = registry.read_text().replace("options: {max_results: 50}", "options: {max_results: 5, pages_per_batch: 2}")
    registry.write_text(text)
    es = es_cluster
    with XAPIServer(corpus, timeout_sleep=0.5) as x_api:
        env = {
            **os.environ,
            "DAGSTER_HOME": str(home), "DAGSTER_PG_URL": pg_url,
            "CRAWL_LAKE": str(tmp_path / "lake"), "CRAWL_REGISTRY": str(registry),
            "CRAWL_X_BASE_URL": x_api.url, "CRAWL_X_BEARER_TOKEN__ACME": "test-token", **es.env(),
            "CRAWL_SCHEDULER_INTERVAL_SECONDS": "2", "CRAWL_REGISTRY_SENSOR_INTERVAL_SECONDS": "2",
            "DAGSTER_CLI_API_GRPC_TIMEOUT": "180", "DAGSTER_EVENT_LOG_CONSUMER_DAEMON_INTERVAL_SECONDS": "1",
        }
        for var in ("CRAWL_ES_API_KEY", "DAGSTER_PG_HOST"):
            env.pop(var, None)
        for k in ("DAGSTER_HOME", "DAGSTER_PG_URL", "CRAWL_LAKE", "CRAWL_REGISTRY"):
            monkeypatch.setenv(k, env[k])
        services = Services(env, REPO, tmp_path, daemon=[sys.executable, "-m", "crawl_assets_tests.e2e.daemon"])
        try:
            with dg.DagsterInstance.get() as instance:
                yield {"instance": instance, "services": services, "x_api": x_api, "es": es, "corpus": corpus,
                       "registry": registry, "tmp": tmp_path}
        finally:
            services.stop()


def test_sensors_backfill_and_killed_worker_converge(stack):
    instance: dg.DagsterInstance = stack["instance"]
    services: Services = stack["services"]
    x_api: XAPIServer = stack["x_api"]
    corpus = stack["corpus"]
    logs = services.tails
    t0 = time.monotonic()

    def phase(name: str) -> None:
        print(f"[e2e] {time.monotonic() - t0:6.1f}s {name}")

    services.wait_ready()
    phase("webserver ready")
    # Enrichment is stopped as docs/ENRICHMENT.md tells (the sensor off in the UI): its runs would hold each source's
    # one run slot for minutes and delay the syncs and the backfill this test is about (enrichment automation:
    # enrich/test_automation.py).
    selector = {"repositoryLocationName": "crawl_assets", "repositoryName": "__repository__",
                "sensorName": AUTOMATION_SENSOR}
    sensor = services.graphql(SENSOR, {"s": selector})["sensorOrError"]
    assert sensor["__typename"] == "Sensor", sensor
    stopped = services.graphql(STOP_SENSOR, {"id": sensor["id"]})["stopSensor"]
    assert stopped["__typename"] == "StopSensorMutationResult", stopped
    assert stopped["instigationState"]["status"] == "STOPPED"

    # 1. The sensors add the partitions and sync every source.
    def all_synced() -> bool:
        health = load_health(instance, KEYS)
        return all(h.last_success for h in health.values()) and not _runs(instance, statuses=ACTIVE_STATUSES)

    wait_for(all_synced, 240, "the scheduler to sync every source", logs)
    phase("first sync done")
    first_runs = _runs(instance)
    assert any(r.tags.get("crawl/batch_size") and r.status == dg.DagsterRunStatus.SUCCESS for r in first_runs), \
        f"healthy sources were synced in a batch run: {[(r.job_name, r.status, r.tags) for r in first_runs]}"
    assert set(instance.get_dynamic_partitions("x_sources")) == set(KEYS)

    # 2. New posts arrive; once the sources are due again the scheduler syncs them incrementally.
    corpus.grow(corpus.user_by_name("data_eng"), 7)
    health = load_health(instance, KEYS)
    save_health(instance, {k: replace(h, last_success=time.time() - 3600) for k, h in health.items()})  # due now
    before = {r.run_id for r in first_runs}

    def incremental_done() -> list[dg.DagsterRun]:
        runs = [r for r in _runs(instance, statuses=[dg.DagsterRunStatus.SUCCESS]) if r.run_id not in before]
        synced = {k for k, h in load_health(instance, KEYS).items() if h.last_run_id in {r.run_id for r in runs}}
        return runs if synced == set(KEYS) else []

    second = wait_for(incremental_done, 180, "an incremental scheduled sync", logs)
    phase("incremental sync done")
    mats = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=RAW, asset_partitions=["acme.x.eng"]), limit=1)
    meta = mats.records[0].asset_materialization.metadata
    assert mats.records[0].run_id in {r.run_id for r in second}
    assert meta["records_new"].value == 7, "only the new posts were fetched"

    # 3. A backfill through GraphQL; its run worker is killed after its first checkpoint; the retry resumes.
    corpus.grow(corpus.user_by_name("persian_news"), 60)
    slow_handle = x_api._handle

    def handle(req):  # ~0.25 s per answer, so the sync of 12+ pages is still going when we kill it
        time.sleep(0.25)
        slow_handle(req)

    x_api._handle = handle
    before_ckpt = load_checkpoint(instance, RAW, "acme.x.news")
    launched = services.graphql(BACKFILL, {"p": {"assetSelection": [{"path": p} for p in CHAIN],
                                                 "partitionNames": ["acme.x.news"]}})["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    backfill_id = launched["backfillId"]

    def backfill_run() -> dg.DagsterRun | None:
        runs = _runs(instance, tags={"dagster/backfill": backfill_id}, statuses=[dg.DagsterRunStatus.STARTED])
        return runs[0] if runs else None

    # a scheduled sync of the same source may still hold its slot (one run per source): it waits for that one
    run = wait_for(backfill_run, 300, "the backfill's run to start", logs, interval=0.2)
    phase("backfill run started")

    def checkpoint_of_run() -> bool:
        recs = instance.fetch_observations(dg.AssetRecordsFilter(asset_key=RAW, asset_partitions=["acme.x.news"]), limit=1)
        return bool(recs.records) and recs.records[0].run_id == run.run_id

    wait_for(checkpoint_of_run, 60, "a checkpoint saved by the backfill run", logs, interval=0.1)
    pid = wait_for(lambda: next((int(m.group(1)) for e in instance.all_logs(run.run_id)
                                 if (m := PID.search(e.message or ""))), None), 30, "the run worker's pid", logs)
    os.kill(pid, signal.SIGKILL)
    phase("run worker killed")
    mid = load_checkpoint(instance, RAW, "acme.x.news")
    assert mid != before_ckpt, "the killed run had moved the checkpoint"

    def retried() -> dg.DagsterRun | None:
        runs = _runs(instance, tags={"dagster/parent_run_id": run.run_id})
        return next((r for r in runs if r.status == dg.DagsterRunStatus.SUCCESS), None)

    retry = wait_for(retried, 180, "the run retry of the killed run to succeed", logs)
    phase("retry succeeded")
    assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
    x_api._handle = slow_handle

    def backfill_status() -> str | None:
        status = services.graphql(BACKFILL_STATUS, {"id": backfill_id})["partitionBackfillOrError"].get("status")
        return status if status not in (None, "REQUESTED", "CANCELING", "FAILING") else None

    wait_for(backfill_status, 90, "the backfill to end", logs, interval=1)
    phase("backfill ended")
    retry_meta = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=RAW, asset_partitions=["acme.x.news"]), limit=1).records[0]
    assert retry_meta.run_id == retry.run_id
    assert 0 < retry_meta.asset_materialization.metadata["records_new"].value < 60, "the retry resumed mid-way"

    # 4. Same lake and index as one uninterrupted sync.
    lake = Lake(str(stack["tmp"] / "lake"))
    services.stop()  # nothing writes to the index any more: it is read, emptied, and synced again for reference
    phase("services stopped")
    got_index = _indexed(stack["es"])
    want_records, want_index = _reference(stack["tmp"], x_api, stack["registry"], stack["es"])
    assert _latest_records(lake) == want_records
    assert got_index == want_index
    assert len(want_records) > 60
    phase("reference compared")
