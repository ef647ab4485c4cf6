"""Forum topics as an API filter, on the real node: a forum supergroup synced from the MTProto stand-in by the
live collector, normalized and indexed by the pipeline's own functions for tenant ``forum`` (indices of its
own: the package's other tenants are untouched), then asked for by topic key and by title."""

from __future__ import annotations

import pytest

from crawl_assets_tests.api.conftest import World, make_client

TENANT = "forum"


@pytest.fixture(scope="module")
def forum(world: World, tmp_path_factory: pytest.TempPathFactory):
    from crawl_assets.api.access import KeyStore
    from crawl_assets.index.indices import setup_indices
    from crawl_assets.lake import Lake
    from crawl_assets.pipeline.index.stage import pending_records, scan_keys
    from crawl_assets.pipeline.index.stage import load
    from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
    from crawl_assets.pipeline.reader import latest_records
    from crawl_assets.pipeline.relate.stage import refresh_relations
    from crawl_assets.registry import SourceEntry
    from crawl_assets.sdk.sync import CollectEnv
    from crawl_assets.sources.telegram.collect import collect
    from crawl_assets.sources.telegram.resource import TelegramCredential, TelegramResource
    from crawl_assets_tests.fakes import FAKE_API_HASH
    from crawl_assets_tests.sources.telegram.test_proxy import Checkpoints, Log
    from crawl_assets_tests.standins import telegram_mtproto as tm

    base = tmp_path_factory.mktemp("forum")
    sim = tm.World()
    chat = sim.channel("forum_api", messages=240, megagroup=True)
    chat.add_topic(60, "اخبار")
    chat.add_topic(150, "Questions")
    chat.edit_topic(60, "اخبار روز")
    tm.use(sim)
    try:
        resource = TelegramResource(credentials={f"{TENANT}:": TelegramCredential(
            api_id="12345", api_hash=FAKE_API_HASH, session=tm.session_for())},
            request_interval_seconds=0, lock_dir=str(base / "locks"))
        source = SourceEntry(name="forum", tenant=TENANT, platform="telegram", kind="group", identifier="@forum_api")
        lake = Lake(str(base / "lake"))
        collect(resource, source, CollectEnv(lake, "run-1", Checkpoints(), Log()))
    finally:
        tm.release()
    for batch in lake.raw_batches(TENANT, "telegram", source.key):
        normalize_batch(lake, batch, lake.table_part(TABLE, TENANT, "telegram", source.key, batch.manifest.batch_id))
    refresh_relations(lake, TENANT, "telegram", source.key)  # the edge files the index step reads
    pending = pending_records(lake, TENANT, "telegram", source.key)
    seen_before, _ = scan_keys(lake, TENANT, "telegram", source.key, pending.keys)
    setup_indices(world.es, [TENANT])
    done = load(world.es, lake, TENANT, "telegram", source.key, pending, seen_before, run_id=None)
    assert done.records.failed == 0 and done.records.docs == len(pending)
    records = list(latest_records(TENANT, "telegram", source.key, lake_root=str(base / "lake")))
    world.es.indices.refresh(index=f"crawl-records-{TENANT}")
    store = KeyStore(world.keys_url)
    key = store.create(TENANT, "forum topics")[1]
    store.close()
    with make_client(world, rate_per_minute=100_000) as client:
        def get(**params):  # noqa: ANN202, ANN003
            resp = client.get("/v1/search", params={"size": 200, **params}, headers={"Authorization": f"Bearer {key}"})
            assert resp.status_code == 200, resp.text[:300]
            return resp.json()

        yield chat, records, get


def test_records_of_one_topic_by_its_key_or_its_title(forum) -> None:
    chat, records, get = forum
    topic = f"telegram:{chat.id}:60"
    expected = {r["key"] for r in records if (r.get("metadata") or {}).get("topic") == topic and not r.get("deleted")}
    # the topic's messages, its creation and its rename, nothing of the other topics or General
    assert len(expected) > 20 and {f"telegram:{chat.id}:60", f"telegram:{chat.id}:241"} <= expected
    by_key = get(topic=topic)
    assert {r["key"] for r in by_key["records"]} == expected and by_key["total"] == len(expected)
    assert all(r["metadata"]["topic_title"] == "اخبار روز" for r in by_key["records"] if r["kind"] != "topic")
    by_title = get(topic="اخبار روز")
    assert {r["key"] for r in by_title["records"]} == expected - {f"telegram:{chat.id}:60"}  # created as «اخبار»
    both = get(topic=[topic, "Questions"])
    questions = {r["key"] for r in records if (r.get("metadata") or {}).get("topic_title") == "Questions"}
    assert {r["key"] for r in both["records"]} == expected | questions and questions
    general = get(topic=f"telegram:{chat.id}:1")["records"]
    assert general and all(r["metadata"]["topic_title"] == "General" for r in general)


def test_a_topic_filter_matches_nothing_of_another_tenant_and_takes_no_syntax(forum, demo) -> None:
    chat, _, get = forum
    assert demo("/v1/search", topic=f"telegram:{chat.id}:60")["total"] == 0  # tenant demo has no such topic
    assert get(topic="*")["total"] == 0 and get(topic="telegram:*:60")["total"] == 0
