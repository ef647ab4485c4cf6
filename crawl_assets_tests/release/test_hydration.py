"""Hydration (``id_list`` sources, ``crawl_assets.release.hydration``): a dehydrated release re-fetched through the X
collector against the v2 stand-in gives the same records minus those the stand-in deleted or withheld, each gone id
with X's reason; a crash mid-hydration re-fetches nothing already stored; bad id lines are named, not dropped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import dagster as dg
import orjson
import pytest

from crawl_assets import settings
from crawl_assets.lake import Lake
from crawl_assets.lake.layout import hydration_report as report_path
from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
from crawl_assets.pipeline.reader import latest_records
from crawl_assets.registry import SourceEntry, load_registry
from crawl_assets.release import ReleaseQuery, create_release
from crawl_assets.release.hydration import hydration_report, plan_hydration
from crawl_assets.sdk.errors import PauseSource
from crawl_assets.sdk.sync import Budget, CollectEnv
from crawl_assets.sdk.exports import tenant_import_root
from crawl_assets.sdk.id_lists import read_id_list
from crawl_assets.sdk.tenant_secrets import TenantSecret
from crawl_assets.sources.x.collect import collect
from crawl_assets.sources.x.hydrate import is_post_id
from crawl_assets.sources.x.resource import XResource
from crawl_assets.sources.x.sync import sync_source
from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.sources.test_plain_collector import Log, MemoryCheckpointer
from crawl_assets_tests.sources.x.conftest import FAST, LakeStore, search
from crawl_assets_tests.standins.x_api import XAPIServer
from crawl_assets_tests.standins.x_corpus import build_corpus

PER_OBSERVATION = ("tenant", "source", "provenance")  # what a record says about the sync that saw it


@pytest.fixture
def x_world():
    """The stand-in, a lake whose tenant ``acme`` synced a search from it (normalized), and a dehydrated release."""
    corpus = build_corpus(200, days=5)
    lake = Lake(settings.lake_root())
    with XAPIServer(corpus) as server:
        client_http = XResource(base_url=server.url, secrets=[TenantSecret(tenant="acme", value="test-token")])
        client = client_http.client("acme")
        client.settings = FAST
        entry = search(query="e")
        store = LakeStore(lake, entry)
        sync_source(client, entry, {}, store, Budget())
        client_http.close()
        for batch in store.batches:
            normalize_batch(lake, batch, lake.table_part(TABLE, "acme", "x", entry.key, batch.manifest.batch_id))
        summary = create_release(lake, ReleaseQuery("acme"), "shared")
        (lab := tenant_import_root("lab")).mkdir(parents=True)
        shutil.copytree(summary.path, lab / "shared")
        yield corpus, server, lake, summary


def _hydrate(server, lake, release_id, checkpointer, **resource):
    entry = SourceEntry(name=f"hydrate-{release_id}", tenant="lab", platform="x", kind="id_list",
                        identifier="shared/ids.jsonl")
    res = XResource(base_url=server.url, secrets=[TenantSecret(tenant="lab", value="test-token")], backoff_seconds=0.01,
                    max_retries=0, **resource)
    try:
        collected = collect(res, entry, CollectEnv(lake, "hydrate-run", checkpointer, Log()))
    finally:
        res.close()
    for batch in collected.batches:
        normalize_batch(lake, batch, lake.table_part(TABLE, "lab", "x", entry.key, batch.manifest.batch_id))
    return entry, collected


def _by_key(tenant: str, source: str | None = None) -> dict[str, dict]:
    return {r["key"]: r for r in latest_records(tenant, source=source)}


def test_dehydrate_then_hydrate_gives_the_same_records_minus_the_gone_each_with_its_reason(x_world):
    corpus, server, lake, summary = x_world
    original = _by_key("acme")
    listed = [orjson.loads(line)["native_id"] for line in (summary.path / "ids.jsonl").read_bytes().splitlines()]
    assert sorted(f"x:{i}" for i in listed) == sorted(original) and len(listed) > 100  # two lookups at least
    assert b'"text"' not in (summary.path / "ids.jsonl").read_bytes()  # dehydrated: no content shared
    # since the release: two posts deleted, one author protected his posts, another was suspended
    deleted = listed[:2]
    for post_id in deleted:
        del corpus.tweets[post_id]
    authors = sorted({original[f"x:{i}"]["author_id"] for i in listed[2:]})
    corpus.protected.add(authors[0])
    corpus.suspended.add(authors[1])
    withheld = {i for i in listed[2:] if original[f"x:{i}"]["author_id"] in authors[:2]}

    entry, collected = _hydrate(server, lake, summary.release_id, MemoryCheckpointer({}))
    assert server.counts()["tweets"] == -(-len(listed) // 100)  # 100 ids a request
    meta = collected.metadata
    assert (meta["ids_listed"], meta["ids_requested"]) == (len(listed), len(listed))
    assert meta["gone_not_found"] == 2 and meta["gone_not_authorized"] == len(withheld)

    hydrated = _by_key("lab", entry.key)
    found = [i for i in listed if i not in deleted and i not in withheld]
    for post_id in found:
        before, after = original[f"x:{post_id}"], hydrated[f"x:{post_id}"]
        assert {k: v for k, v in after.items() if k not in PER_OBSERVATION} == \
               {k: v for k, v in before.items() if k not in PER_OBSERVATION}, post_id
    for post_id in deleted:
        gone = hydrated[f"x:{post_id}"]
        assert gone["deleted"] and gone["metadata"]["unavailable"] == "not_found" and not gone["text"]
    for post_id in withheld:
        gone = hydrated[f"x:{post_id}"]
        # X answers protected and suspended authors' posts alike: not authorized, and not deleted
        assert gone["metadata"]["unavailable"] == "not_authorized" and not gone["deleted"] and not gone["text"]

    plan = plan_hydration(tenant_import_root("lab") / "shared")
    report = hydration_report(lake, "lab", plan)
    assert (report["found"], report["gone"], report["pending"]) == (len(found), len(deleted) + len(withheld), 0)
    assert report["reasons"] == {"gone:not_found": 2, "gone:not_authorized": len(withheld)}
    lines = [orjson.loads(x) for x in lake.read_bytes(report_path("lab", summary.release_id)).splitlines()]
    assert [x["native_id"] for x in lines] == listed
    by_id = {x["native_id"]: x for x in lines}
    assert by_id[deleted[0]]["detail"] == f"Could not find tweet with ids: [{deleted[0]}]."
    assert {by_id[i]["status"] for i in found} == {"found"}


def test_a_crash_mid_hydration_refetches_nothing_already_stored(x_world):
    _, server, lake, summary = x_world
    total = len((summary.path / "ids.jsonl").read_bytes().splitlines())
    checkpoints = MemoryCheckpointer({})
    server.inject("401", "tweets", after=1)  # the second lookup is refused: the source pauses
    with pytest.raises(PauseSource):
        _hydrate(server, lake, summary.release_id, checkpoints)
    assert checkpoints.saved[-1]["next"] == 100  # the first answer was stored with the state covering it
    _hydrate(server, lake, summary.release_id, checkpoints)
    asked = [i for r in server.log if r.endpoint == "tweets" and r.status == 200 for i in r.params["ids"].split(",")]
    assert sorted(asked) == sorted(set(asked)) and len(asked) == total  # every id once, none again
    assert checkpoints.saved[-1]["next"] == total
    before = server.counts()["tweets"]
    _hydrate(server, lake, summary.release_id, checkpoints)  # done: a further sync asks nothing
    assert server.counts()["tweets"] == before


def test_id_list_lines_that_are_not_ids_are_named_and_the_rest_read():
    (root := tenant_import_root("lab")).mkdir(parents=True)
    (root / "ids.txt").write_bytes(b"123\n\nabc\n" + b"9" * 5000 + b"\n123\n"
                                   + b'{"platform": "telegram", "native_id": "5:6"}\n{"native_id": 7}\n456')
    entry = SourceEntry(name="h", tenant="lab", platform="x", kind="id_list", identifier="ids.txt")
    ids = read_id_list(entry, is_post_id, "an X post id")
    assert ids.ids == ["123", "456"]
    assert (ids.duplicates, ids.other_platforms, ids.refused_count) == (1, 1, 3)
    assert ids.refused == ["line 3: not an X post id: 'abc'", "line 4: longer than 4096 bytes",
                           "line 7: an object with a string 'native_id' was expected"]


@pytest.mark.integration  # the command in its own process, through a Dagster job
def test_release_hydrate_registers_an_id_list_source_and_syncs_it_through_its_job(x_world, monkeypatch):
    """The command as a user runs it (its own process, the definitions from the environment)."""
    corpus, server, lake, summary = x_world
    listed = [orjson.loads(line)["native_id"] for line in (summary.path / "ids.jsonl").read_bytes().splitlines()]
    del corpus.tweets[listed[0]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRAWL_X_")}
    run = subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", "release", "hydrate", "shared", "--tenant", "lab"],
                         capture_output=True, text=True, timeout=300, cwd=REPO,
                         env={**env, "CRAWL_X_BASE_URL": server.url, "CRAWL_X_BEARER_TOKEN__LAB": "test-token"})
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout[run.stdout.index("{"):])
    assert (report["found"], report["gone"], report["pending"]) == (len(listed) - 1, 1, 0)
    assert report["reasons"] == {"gone:not_found": 1}
    key = f"lab.x.hydrate-{summary.release_id}"
    [entry] = [e for e in load_registry(settings.registry_path()).entries if e.key == key]
    assert (entry.kind.value, entry.identifier) == ("id_list", "shared/ids.jsonl")
    with dg.DagsterInstance.get() as instance:
        [done] = instance.get_runs()
    assert done.job_name == "x_sync_no_index" and done.tags["dagster/partition"] == key
    assert len(_by_key("lab", key)) == len(listed)  # normalized by the job: found records and the tombstone


@pytest.mark.parametrize(("identifier", "says"), [("nowhere/ids.txt", "cannot be opened"),
                                                   ("../acme/ids.txt", "leaves the tenant's import root")])
def test_an_id_list_that_cannot_be_read_pauses_the_source_with_the_reason(identifier, says):
    tenant_import_root("lab").mkdir(parents=True)
    entry = SourceEntry(name="h", tenant="lab", platform="x", kind="id_list", identifier=identifier)
    resource = XResource(base_url="http://127.0.0.1:9", secrets=[TenantSecret(tenant="lab", value="test-token")])
    with pytest.raises(PauseSource, match=says):
        collect(resource, entry, CollectEnv(Lake(settings.lake_root()), "run", MemoryCheckpointer({}), Log()))


def test_a_package_whose_ids_are_not_text_is_refused_even_when_its_manifest_agrees():
    import pyarrow as pa
    import pyarrow.parquet as pq

    from crawl_assets.release import PackageInvalid
    from crawl_assets.release.files import MANIFEST, write_manifest
    from crawl_assets_tests.release.lake_data import make_lake

    summary = create_release(make_lake(Lake(settings.lake_root())), ReleaseQuery("acme"), "odd")
    pq.write_table(pa.table({"key": [1], "platform": ["x"], "native_id": ["10"], "source": ["s"]}),
                   summary.path / "ids.parquet")
    (summary.path / MANIFEST).unlink()
    write_manifest(summary.path, summary.release_id)  # whoever rewrites a package can rewrite its manifest
    with pytest.raises(PackageInvalid, match="ids.parquet: its columns"):
        plan_hydration(summary.path)
