"""Attacks on credential lookup (issue 15, item 3): one tenant syncing with another's token or passing its
webhook signature, because variable names folded two names into one or ignored the tenant."""

from __future__ import annotations

import asyncio
import itertools

import dagster as dg
import httpx
import orjson
import pytest
from pydantic import ValidationError

from crawl_assets.registry import SourceEntry
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.sdk.tenant_secrets import secret_var
from crawl_assets.webhooks.signatures import SCHEMES, sign
from crawl_assets_tests.standins.x_api import XAPIServer
from crawl_assets_tests.standins.x_corpus import build_corpus
from crawl_assets_tests.webhooks.conftest import serve

NAMES = ["a", "b", "ab", "a-b", "a_b", "a__b", "a-_b", "a--b", "a_", "a-", "b__a", "a__b__c", "default"]


def _valid(tenant: str, credential: str | None) -> bool:
    try:
        SourceEntry(name="n", tenant=tenant, platform="x", kind="search_query", identifier="q", credential=credential)
    except ValidationError:
        return False
    return True


def test_credential_variables_are_injective_over_every_accepted_name():
    """Two different (tenant, credential) pairs the registry accepts never read the same variable, except
    tenants like a-b/a_b, which the registry refuses to hold together (test_registry_attacks)."""
    pairs = [(t, c) for t in NAMES for c in [None, *(n for n in NAMES if n != "default")] if _valid(t, c)]
    assert ("a-b", "b") in pairs and ("a", None) in pairs
    for (t1, c1), (t2, c2) in itertools.combinations(pairs, 2):
        if secret_var("CRAWL_X", t1, c1) == secret_var("CRAWL_X", t2, c2):
            assert c1 == c2 and t1 != t2 and t1.replace("-", "_") == t2.replace("-", "_"), (t1, c1, t2, c2)


def test_an_x_source_cannot_use_another_tenants_token(tmp_path, monkeypatch):
    from crawl_assets.orchestration.assets import raw_asset

    x_posts_raw = raw_asset("x")
    from crawl_assets.sources.x.resource import XResource

    (tmp_path / "sources.yaml").write_text(
        "sources:\n  - {name: tl, tenant: globex, platform: x, kind: account_timeline, identifier: data_eng, "
        "credential: shared}\n")
    with XAPIServer(build_corpus(50, days=2), tokens={"acme-token"}) as x:
        # acme's token under both the old (name only) and the new (tenant and name) variable
        for var in ("CRAWL_X_SHARED_BEARER_TOKEN", "CRAWL_X_BEARER_TOKEN__ACME__SHARED"):
            monkeypatch.setenv(var, "acme-token")
        monkeypatch.setenv("CRAWL_X_BASE_URL", x.url)
        resources = {"lake": LakeResource(root=str(tmp_path / "lake")),
                     "registry": RegistryResource(path=str(tmp_path / "sources.yaml")), "x": XResource.from_env()}
        with dg.instance_for_test() as instance:
            instance.add_dynamic_partitions("x_sources", ["globex.x.tl"])
            result = dg.materialize([x_posts_raw], partition_key="globex.x.tl", resources=resources,
                                    instance=instance, raise_on_error=False)
        messages = " ".join(e.step_failure_data.error.message for e in result.all_events if e.is_step_failure)
        assert not result.success and x.log == [], "globex's source reached the API with acme's token"
        assert "CRAWL_X_BEARER_TOKEN__GLOBEX__SHARED" in messages


def test_a_telegram_source_cannot_use_another_tenants_account(tmp_path, monkeypatch):
    from crawl_assets.sources.telegram.errors import SourceGone
    from crawl_assets.sources.telegram.resource import TelegramResource
    from crawl_assets_tests.fakes import FAKE_API_HASH
    from crawl_assets_tests.sources.telegram.conftest import SESSION
    from crawl_assets_tests.standins import telegram_mtproto as tm

    world = tm.World()
    world.channel("news", messages=5)
    tm.use(world)
    try:
        monkeypatch.setenv("CRAWL_TELEGRAM_API_ID", "12345")
        monkeypatch.setenv("CRAWL_TELEGRAM_API_HASH", FAKE_API_HASH)
        for var in ("CRAWL_TELEGRAM_ALICE_SESSION", "CRAWL_TELEGRAM_SESSION__ACME__ALICE"):  # acme's account
            monkeypatch.setenv(var, SESSION)
        resource = TelegramResource.from_env().model_copy(update={
            "lock_dir": str(tmp_path / "locks"), "request_interval_seconds": 0.0,
        }).process_config_and_initialize()

        async def connect(tenant: str) -> None:
            async with resource.connected(tenant, "alice"):
                pass

        asyncio.run(connect("acme"))
        assert world.connects == 1
        with pytest.raises(SourceGone, match="CRAWL_TELEGRAM_SESSION__GLOBEX__ALICE"):
            asyncio.run(connect("globex"))
        assert world.connects == 1, "globex's source connected with acme's account"
    finally:
        tm.release()


def test_a_webhook_cannot_pass_with_a_tenant_whose_name_folds_onto_another(tmp_path):
    """Old: tenants a-b and a_b both valid, both reading ..._SECRET__A_B: a_b's endpoint accepted a-b's secret."""
    registry = tmp_path / "sources.yaml"
    registry.write_text("sources:\n"
                        "  - {name: support, tenant: a-b, platform: intercom, kind: workspace, identifier: w1}\n"
                        "  - {name: support, tenant: a_b, platform: intercom, kind: workspace, identifier: w2}\n")
    secret = "a-b-intercom-client-secret"
    body = orjson.dumps({"type": "notification_event", "id": "notif_9", "topic": "ping", "data": {}})
    with serve(registry, tmp_path / "lake", {"CRAWL_INTERCOM_WEBHOOK_SECRET__A_B": secret}) as url:
        resp = httpx.post(f"{url}/hooks/intercom/a_b.intercom.support", content=body, timeout=5,
                          headers={"X-Hub-Signature": sign(SCHEMES["intercom"], body, secret)})
    assert resp.status_code == 401 and not list((tmp_path / "lake").rglob("*.json")), "landed with a-b's secret"
