"""``crawl-assets erase``: after erasing an author (or a source) nothing of theirs remains in the raw
lake, the tables, the edges or the index, a re-sync does not bring it back, and the log holds no data."""

from __future__ import annotations

from collections import Counter

import orjson
import pytest
from click.testing import CliRunner

from crawl_assets import settings
from crawl_assets.cli.demo import register_samples
from crawl_assets.cli.main import cli
from crawl_assets.erasure.scrub import Subject, persons_of, scrub
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets_tests.erasure.conftest import sync_all
from crawl_assets_tests.es_node.fixtures import EsCluster
from crawl_assets_tests.es_node.inspect import sources


_sync_all = sync_all  # the name other erasure tests import


def _records(lake: Lake, tenant: str) -> list[dict]:
    out = []
    for path in lake.fs.glob(lake.path(f"tables/normalized_records/{tenant}/*/*/*.parquet")):
        import pyarrow.parquet as pq

        with lake.fs.open(path, "rb") as fh:
            out += list(arrow_to_records(pq.read_table(fh)))
    return out


def _index_docs(es: EsCluster, family: str) -> dict[str, dict]:
    return sources(es.client, f"crawl-{family}-demo")


@pytest.fixture
def synced(dagster_home, monkeypatch, es_cluster: EsCluster, synced_copy: list[str] | None):
    """The demo's samples synced (raw → index): the session's world copied, or synced here without one."""
    for name, value in es_cluster.env().items():
        monkeypatch.setenv(name, value)
    keys = synced_copy
    if keys is None:
        keys = register_samples(settings.registry_path())
        sync_all(keys)
    yield es_cluster, keys, Lake(settings.lake_root())


def test_erase_author_leaves_nothing_and_a_resync_does_not_restore_it(synced):
    es, keys, lake = synced
    before = _records(lake, "demo")
    author = Counter(r["author_id"] for r in before if r["author_id"] and r["platform"] == "x").most_common(1)[0][0]
    erased = {r["key"] for r in before if r["author_id"] == author}
    others = {r["key"] for r in before} - erased
    assert erased and others

    result = CliRunner().invoke(cli, ["erase", "--tenant", "demo", "--author", author])
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["records"] == len(erased) and report["index_records_deleted"] == len(erased)

    for _ in range(2):  # right after the erasure, and after a full re-sync from raw
        after = _records(lake, "demo")
        assert not {r["key"] for r in after} & erased
        assert {r["key"] for r in after} == others, "other people's records are untouched"
        assert not [r for r in after if r["author_id"] == author]
        subject = Subject.of(persons_of("x"), author, frozenset(k.split(":")[-1] for k in erased))
        for path in lake.fs.glob(lake.path("raw/demo/*/*/*.jsonl.gz")):
            import gzip

            with lake.fs.open(path, "rb") as fh:
                data = gzip.decompress(fh.read())
            if data.lstrip().startswith(b"window."):
                data = data.partition(b"=")[2]
            for line in data.splitlines() if not data.lstrip().startswith((b"{\n", b"[")) else [data]:
                if line.strip():
                    item = orjson.loads(line)
                    assert scrub(item, subject) == item, f"{path}: raw data of the erased author remains"
        docs = _index_docs(es, "records")
        assert not set(docs) & erased and not [d for d in docs.values() if d.get("author_id") == author]
        edges = _index_docs(es, "edges")
        assert not [e for e in edges.values() if e["src"] in erased]
        for path in lake.fs.glob(lake.path("tables/relation_edges/demo/*/*/*.parquet")) + lake.fs.glob(
                lake.path("tables/author_hashtag/demo/*/*/*.parquet")):
            import pyarrow.parquet as pq

            with lake.fs.open(path, "rb") as fh:
                rows = pq.read_table(fh).to_pylist()
            assert not [r for r in rows if r.get("src") in erased or r.get("author_id") == author]
        sync_all(keys)

    [entry] = lake.read_erasure_log("demo")
    text = orjson.dumps(entry).decode()
    assert entry["by"] == "author" and entry["records"] == len(erased)
    assert author not in text and not any(k in text for k in erased), "the log holds no data"


def test_erase_source_removes_its_lake_folders_and_documents(synced):
    es, _, lake = synced
    source = "demo.x.sample-archive"
    assert [d for d in _index_docs(es, "records").values() if d["source"] == source]
    result = CliRunner().invoke(cli, ["erase", "--tenant", "demo", "--source", source])
    assert result.exit_code == 0, result.output
    assert not [p for p in lake.fs.find(lake.path("")) if f"/{source}/" in p or p.endswith(f"/{source}")]
    assert not [d for d in _index_docs(es, "records").values() if d["source"] == source]
    assert [d for d in _index_docs(es, "records").values() if d["source"] != source], "other sources stay"
    assert lake.read_erasure_log("demo")[0]["by"] == "source"


def _letters(lake: Lake) -> list[dict]:
    out = []
    for path in lake.fs.glob(lake.path("deadletter/*/*/demo/*.jsonl")):
        with lake.fs.open(path, "rb") as fh:
            out += [orjson.loads(line) for line in fh if line.strip()]
    return out


def test_erase_author_scrubs_dead_letter_files(synced, fault_proxy):
    """Documents the index refused are full copies in the lake's dead-letter files: erased there too,
    pending and already-replayed files alike; other people's letters stay for replay."""
    from crawl_assets.index.outcomes import pending_files
    from crawl_assets.index.sink import index_documents

    es, _, lake = synced
    records = [r for r in _records(lake, "demo") if r["platform"] == "x"]
    author = Counter(r["author_id"] for r in records if r["author_id"]).most_common(1)[0][0]
    theirs = [r for r in records if r["author_id"] == author][:3]
    others = [r for r in records if r["author_id"] != author][:3]
    fault_proxy.faults.refuse_items([r["key"] for r in theirs + others])
    with es.resource(fault_proxy.url).get_client() as client:
        for run_id in ("first", "second"):  # two files: one is then moved to the replayed folder
            stats = index_documents(client, theirs + others, family="records", tenant="demo",
                                    deadletter_root=lake.root, run_id=run_id)
            assert stats.failed == 6
    fault_proxy.faults.clear()
    first = pending_files(lake.root, "records", "demo")[0]
    lake.fs.makedirs(lake.path("deadletter/es-replayed/records/demo"), exist_ok=True)
    lake.fs.mv(first, lake.path("deadletter/es-replayed/records/demo/") + first.rsplit("/", 1)[-1])
    assert len([x for x in _letters(lake) if x["doc"]["author_id"] == author]) == 6

    result = CliRunner().invoke(cli, ["erase", "--tenant", "demo", "--author", author])
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["deadletters_removed"] == 6
    letters = _letters(lake)
    assert not [x for x in letters if author in orjson.dumps(x["doc"]).decode()], "no erased data in dead letters"
    assert sorted(x["id"] for x in letters) == sorted(2 * [r["key"] for r in others]), "the others stay"


def test_erase_needs_exactly_one_selector():
    for args in ([], ["--author", "1", "--source", "demo.x.a"]):
        result = CliRunner().invoke(cli, ["erase", "--tenant", "demo", *args])
        assert result.exit_code == 2 and "exactly one" in result.output



def test_erasure_waits_for_a_running_sync_of_the_tenant(synced):
    """A sync of the tenant (another process holding its source lock) and an erasure never overlap: the
    erasure gives up after its wait, having changed nothing."""
    import subprocess
    import sys

    from crawl_assets.erasure import Selector, erase
    from crawl_assets.erasure.authors import Author
    from crawl_assets.locks.shared import SourceBusy
    from crawl_assets_tests.conftest import REPO

    _, keys, lake = synced
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom crawl_assets.locks.shared import source_lock\n"
         f"with source_lock({keys[0]!r}):\n    print('held', flush=True)\n    time.sleep(30)"],
        stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = _records(lake, "demo")
        with pytest.raises(SourceBusy):
            erase(lake, None, Selector(tenant="demo", source=keys[0]), lock_wait_seconds=0.3)
        assert _records(lake, "demo") == before and not lake.read_erasure_log("demo")
    finally:
        holder.kill()
        holder.wait()
    report = erase(lake, None, Selector(tenant="demo", source=keys[0]), lock_wait_seconds=5)
    assert report.sources == [keys[0]]


def test_a_rewritten_batch_keeps_its_place_in_collection_order(tmp_path):
    """An erasure rewrites a batch without the erased items; the other items in it must not become the
    latest observation of their keys over what later batches observed (an edit, here)."""
    from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
    from crawl_assets.erasure import Selector, erase
    from crawl_assets.erasure.authors import Author
    from crawl_assets.lake.layout import BATCH_ID

    def message(mid: int, text: str, sender: int, edit_date: str | None = None) -> bytes:
        mention = text.find("@")
        entities = [{"_": "MessageEntityMention", "offset": mention, "length": len(text) - mention}] if mention >= 0 else []
        return orjson.dumps({"_": "Message", "id": mid, "peer_id": {"_": "PeerChannel", "channel_id": 777},
                             "from_id": {"_": "PeerUser", "user_id": sender}, "date": "2026-01-05T10:00:00+00:00",
                             "edit_date": edit_date, "message": text, "entities": entities})

    lake = Lake(str(tmp_path / "lake"))
    source = "acme.telegram.group"
    common = dict(tenant="acme", platform="telegram", source=source, fmt="telegram", method="api")
    batches = [
        lake.write_raw_batch(batch_id="20260105T100000000000Z-r1-0000", run_id="r1",
                             lines=[message(1, "first version", 501), message(2, "to be erased @secret_friend", 666)], **common),
        lake.write_raw_batch(batch_id="20260106T100000000000Z-r2-0000", run_id="r2",
                             lines=[message(1, "edited version", 501, "2026-01-06T09:00:00+00:00")], **common),
    ]
    for batch in batches:
        normalize_batch(lake, batch, lake.table_part(TABLE, "acme", "telegram", source, batch.manifest.batch_id))

    from crawl_assets.pipeline import discovery
    from crawl_assets.sources.telegram.discovery import references

    assert [c["candidate"] for c in discovery.refresh(lake, "acme", "telegram", references)["candidates"]] == [
        "@secret_friend"]
    report = erase(lake, None, Selector(tenant="acme", author=Author("telegram", "666")), lock_wait_seconds=5)
    assert report.records == 1 and report.batches_rewritten == 1
    # the discovery table named someone only the erased message mentioned: removed, computed again without it
    assert report.discovery_files_removed == 1 and discovery.stored(lake, "acme", "telegram") is None
    assert discovery.refresh(lake, "acme", "telegram", references)["candidates"] == []
    ids = [b.manifest.batch_id for b in lake.raw_batches("acme", "telegram", source)]
    assert len(ids) == 2 and all(BATCH_ID.match(i) for i in ids)
    latest = {}
    for _, table in lake.read_parts(TABLE, "acme", "telegram", source):
        latest.update((r["key"], r) for r in arrow_to_records(table))
    assert set(latest) == {"telegram:777:1"}
    assert latest["telegram:777:1"]["text"] == "edited version", "the later observation still wins"


def test_an_erasure_whose_lake_step_already_ran_still_empties_the_index(synced):
    """The lake step first, the index later (an interrupted erasure, or one run without a cluster first):
    the second run finds nothing left in the lake, and takes the subject's documents from the index itself."""
    from elasticsearch import Elasticsearch

    from crawl_assets.erasure import Selector, erase
    from crawl_assets.erasure.authors import Author

    es, _, lake = synced
    before = _index_docs(es, "records")
    author = Counter(d["author_id"] for d in before.values() if d.get("author_id") and d["platform"] == "x"
                     ).most_common(1)[0][0]
    theirs = {k for k, d in before.items() if d.get("author_id") == author}
    assert theirs and [e for e in _index_docs(es, "edges").values() if e["src"] in theirs]

    lake_only = erase(lake, None, Selector(tenant="demo", author=Author("x", author)), lock_wait_seconds=5)
    assert lake_only.records == len(theirs) and set(_index_docs(es, "records")) == set(before), "index untouched"
    with Elasticsearch(es.url) as client:
        again = erase(lake, client, Selector(tenant="demo", author=Author("x", author)), lock_wait_seconds=5)
    assert again.records == 0, "nothing of theirs left in the lake"
    assert again.index_records_deleted == len(theirs)
    assert set(_index_docs(es, "records")) == set(before) - theirs
    assert not [e for e in _index_docs(es, "edges").values() if e["src"] in theirs]
