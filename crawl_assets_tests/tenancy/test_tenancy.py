"""Two tenants, each with an Intercom source of the same name and a credential of the same name: their
runs, lake paths, records, index aliases and secrets never mix.

Both sources go through the whole sync chain (raw → normalized_records → relation_edges → search_index)
against the Intercom stand-in (which binds each token to one workspace) and the real Elasticsearch node.
"""

from __future__ import annotations

import dagster as dg
import pytest

from crawl_assets.orchestration.assets import derived_assets, raw_asset
from crawl_assets.index.naming import read_alias
from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry, load_registry
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.sources.intercom.resource import IntercomResource
from crawl_assets.sources.play.resource import PlayResource
from crawl_assets.sdk.tenant_secrets import MissingCredential, secret_var
from crawl_assets_tests.standins.intercom_api import IntercomServer, make_conversation

intercom_conversations_raw = raw_asset("intercom")

REGISTRY = """sources:
  - {name: support, tenant: acme, platform: intercom, kind: workspace, identifier: wsa, credential: main}
  - {name: support, tenant: globex, platform: intercom, kind: workspace, identifier: wsg, credential: main}
  - {name: orphan, tenant: initech, platform: intercom, kind: workspace, identifier: wsi, credential: main}
"""
TOKENS = {"acme": "tok-acme-secret-value", "globex": "tok-globex-secret-value"}
KEYS = {"acme": "acme.intercom.support", "globex": "globex.intercom.support"}


@pytest.fixture
def world(tmp_path, monkeypatch, es_cluster):
    for tenant, token in TOKENS.items():
        monkeypatch.setenv(secret_var("CRAWL_INTERCOM_ACCESS_TOKEN", tenant, "main"), token)
    (tmp_path / "sources.yaml").write_text(REGISTRY)
    acme = [make_conversation(i, 1_780_000_000 + i * 60, 1_780_000_000 + i * 60 + 30, text="acme app crashes") for i in range(1, 9)]
    globex = [make_conversation(i, 1_780_000_000 + i * 60, 1_780_000_000 + i * 60 + 30, text="برنامه گلوبکس") for i in range(1, 6)]
    with IntercomServer(workspaces={TOKENS["acme"]: ("wsa", acme), TOKENS["globex"]: ("wsg", globex)}) as api:
        monkeypatch.setenv("CRAWL_INTERCOM_BASE_URL", api.url)
        yield tmp_path, api, es_cluster


def _sync(tmp_path, es, key: str, instance: dg.DagsterInstance, *, raise_on_error: bool = True) -> dg.ExecuteInJobResult:
    raw = intercom_conversations_raw
    return dg.materialize(
        [raw, *derived_assets("intercom", raw)], partition_key=key, instance=instance, raise_on_error=raise_on_error,
        resources={"lake": LakeResource(root=str(tmp_path / "lake")),
                   "registry": RegistryResource(path=str(tmp_path / "sources.yaml")),
                   "intercom": IntercomResource.from_env(),
                   "elasticsearch": es.resource(max_retries=0)})


def test_two_tenants_never_mix(world):
    tmp_path, api, es = world
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("intercom_sources", list(KEYS.values()))
        runs = {tenant: _sync(tmp_path, es, key, instance) for tenant, key in KEYS.items()}
        logs = " ".join(str(e.message) for r in runs.values() for e in instance.all_logs(r.run_id))
    lake = Lake(str(tmp_path / "lake"))
    workspace = {"acme": "wsa", "globex": "wsg"}
    for tenant, key in KEYS.items():
        # lake paths: each tenant's raw data under its own folder, holding only its workspace
        batches = lake.raw_batches(tenant, "intercom", key)
        assert batches and all(f"/raw/{tenant}/intercom/{key}/" in b.path for b in batches)
        for batch in batches:
            with lake.open_raw(batch) as fh:
                assert all(f'"workspace":"{workspace[tenant]}"'.encode() in line for line in fh)
        rows = [row for _, t in lake.read_parts("normalized_records", tenant, "intercom", key) for row in t.to_pylist()]
        assert rows and {r["tenant"] for r in rows} == {tenant}
        assert all(r["key"].startswith(f"intercom:{workspace[tenant]}:") for r in rows)
    # nothing of one tenant under the other's folders
    other = lake.raw_batches("acme", "intercom", KEYS["globex"]) + lake.raw_batches("globex", "intercom", KEYS["acme"])
    assert other == []

    # index: each tenant's read alias holds exactly its own records
    client = es.client
    counts = {}
    for tenant in KEYS:
        hits = client.search(index=read_alias("records", tenant), query={"match_all": {}}, size=1000)["hits"]["hits"]
        assert hits and {h["_source"]["tenant"] for h in hits} == {tenant}
        assert all(h["_index"].startswith(f"crawl-records-{tenant}.") for h in hits)
        counts[tenant] = len(hits)
    assert counts["acme"] != counts["globex"]

    # credentials: each token went only to its own workspace, and no token reached logs or the lake
    assert {e.status for e in api.log} == {200}
    for token in TOKENS.values():
        assert token not in logs
        for path in lake.fs.find(lake.path("")):
            with lake.fs.open(path, "rb") as fh:
                assert token.encode() not in fh.read()


def test_a_tenant_without_its_own_secret_gets_no_other_tenants(world):
    tmp_path, api, es = world
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("intercom_sources", ["initech.intercom.orphan"])
        result = _sync(tmp_path, es, "initech.intercom.orphan", instance, raise_on_error=False)
        messages = " ".join(e.step_failure_data.error.message for e in result.all_events if e.is_step_failure)
    assert not result.success and api.log == []
    assert "CRAWL_INTERCOM_ACCESS_TOKEN__INITECH__MAIN" in messages
    # a configuration error pauses the source like any other (README, OPERATIONS), naming the variable to set
    orphan = load_registry(tmp_path / "sources.yaml").get("initech.intercom.orphan")
    assert orphan.paused and "CRAWL_INTERCOM_ACCESS_TOKEN__INITECH__MAIN" in (orphan.status_reason or "")


def test_secret_lookup_is_exact_per_tenant_and_name():
    env = {"CRAWL_PLAY_SERVICE_ACCOUNT_JSON__ACME__MAIN": "{}", "CRAWL_PLAY_SERVICE_ACCOUNT_JSON": "{}",
           "CRAWL_PLAY_SERVICE_ACCOUNT_JSON__GLOBEX": "{}"}
    res = PlayResource.from_env(env)
    assert sorted((s.tenant, s.name) for s in res.secrets) == [("acme", "main"), ("default", ""), ("globex", "")]
    assert all(isinstance(s.value, dg.EnvVar) for s in res.secrets)  # values stay out of run config

    def entry(tenant: str, credential: str | None) -> SourceEntry:
        return SourceEntry(name="app", tenant=tenant, platform="play", kind="app", identifier="com.a", credential=credential)

    for tenant, credential, var in (("globex", "main", "__GLOBEX__MAIN"), ("acme", None, "__ACME"),
                                    ("initech", None, "__INITECH")):
        with pytest.raises(MissingCredential, match="CRAWL_PLAY_SERVICE_ACCOUNT_JSON" + var):
            res.secret(entry(tenant, credential).tenant, credential)
    assert secret_var("CRAWL_X", "default", None) == "CRAWL_X" and secret_var("CRAWL_X", "a-b", "n") == "CRAWL_X__A_B__N"
