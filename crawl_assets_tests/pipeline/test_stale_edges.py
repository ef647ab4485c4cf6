"""An edit that drops a hashtag or a mention turns the old edge documents into tombstones, so the index's
live edges stay those of the current record (as the lake's ``relation_edges`` table holds them), and an
older observation sent again cannot bring them back."""

import dagster as dg
import orjson
import pyarrow.compute as pc

from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.orchestration.resources import LakeResource
from crawl_assets_tests.es_node.inspect import sources

SOURCE = "acme.telegram.news"


def message(mid: int, text: str, edit_date: str | None = None) -> bytes:
    entities = []
    for word in text.split():
        if word[0] in "#@":
            kind = "MessageEntityHashtag" if word[0] == "#" else "MessageEntityMention"
            entities.append({"_": kind, "offset": text.index(word), "length": len(word)})
    return orjson.dumps({
        "_": "Message", "id": mid, "peer_id": {"_": "PeerChannel", "channel_id": 777},
        "date": "2026-01-05T10:00:00+00:00", "edit_date": edit_date, "message": text, "post": True,
        "entities": entities,
    })


def _edges_in_index(es, deleted: bool = False) -> set[tuple[str, str, str]]:
    return {(d["type"], d["src"], d["dst"]) for d in sources(es.client, "crawl-edges-acme").values()
            if bool(d.get("deleted")) == deleted}


def test_edit_dropping_a_hashtag_and_a_mention_removes_their_edges(tmp_path, es_cluster):
    from crawl_assets.definitions import defs

    lake = Lake(str(tmp_path / "lake"))
    common = dict(tenant="acme", platform="telegram", source=SOURCE, fmt="telegram", method="api")
    keys = [dg.AssetKey(["telegram", name]) for name in ("normalized_records", "relation_edges", "search_index")]
    assets = [defs.get_assets_def(k) for k in keys]
    es = es_cluster
    with dg.instance_for_test() as instance:
        resources = {"lake": LakeResource(root=lake.root), "elasticsearch": es.resource()}
        instance.add_dynamic_partitions("telegram_sources", [SOURCE])

        def sync() -> dg.ExecuteInProcessResult:
            result = dg.materialize(assets, partition_key=SOURCE, instance=instance, resources=resources)
            assert result.success
            return result

        lake.write_raw_batch(batch_id="20260105T100000000000Z-r1-0000", run_id="r1", lines=[
            message(1, "خبر #اقتصاد #تهران از @reporter"), message(2, "دیگر #اقتصاد")], **common)
        sync()
        before = _edges_in_index(es)
        assert ("hashtag", "telegram:777:1", "hashtag:تهران") in before
        assert ("mention", "telegram:777:1", "telegram:user:reporter") in before

        lake.write_raw_batch(batch_id="20260106T100000000000Z-r2-0000", run_id="r2", lines=[
            message(1, "خبر #اقتصاد", edit_date="2026-01-06T09:00:00+00:00")], **common)
        es.client.indices.put_settings(index="crawl-edges-acme", settings={"index": {"refresh_interval": "-1"}})
        result = sync()
        refresh = es.client.indices.get_settings(index="crawl-edges-acme", name="index.refresh_interval")
        assert {v["settings"]["index"]["refresh_interval"] for v in refresh.values()} == {"5s"}, \
            "refresh a stopped load left off is back on at the next index step"

        want = {(e["type"], e["src"], e["dst"]) for _, table in lake.read_parts("relation_edges", "acme", "telegram", SOURCE)
                for e in arrow_to_records(table)}
        assert _edges_in_index(es) == want, "the index holds exactly the current edges"
        assert ("hashtag", "telegram:777:1", "hashtag:تهران") not in want
        assert ("hashtag", "telegram:777:2", "hashtag:اقتصاد") in want, "the other record's edges stay"
        [mat] = result.asset_materializations_for_node("telegram__search_index")
        assert mat.metadata["stale_edges_removed"].value == 2
        dropped = {("hashtag", "telegram:777:1", "hashtag:تهران"), ("mention", "telegram:777:1", "telegram:user:reporter")}
        assert _edges_in_index(es, deleted=True) == dropped, "kept as tombstones with the edit's version"

        # The older observation's edges sent again (a backfill, another source holding the same message):
        # older version than the tombstones, so no-ops; the dropped edges stay dropped.
        from crawl_assets.index.documents import edge_documents, record_versions
        from crawl_assets.index.sink import BulkSink
        from crawl_assets.pipeline.relate.parts import edges_of
        [(_, first_part), *_] = list(lake.read_parts("normalized_records", "acme", "telegram", SOURCE))
        old = first_part.filter(pc.equal(first_part.column("key"), "telegram:777:1"))
        old_edges = edges_of(old)
        [version], _ = record_versions(old)
        with es.resource().get_client() as client, BulkSink(client, family="edges", tenant="acme",
                                                               deadletter_root=lake.root, run_id="old") as sink:
            sink.add_encoded(edge_documents(old_edges, [int(version)] * old_edges.num_rows))
        assert old_edges.num_rows == 3 and sink.stats.noop == 3 and sink.stats.failed == 0
        assert _edges_in_index(es) == want and _edges_in_index(es, deleted=True) == dropped

        # A later edit that has the hashtag again revives its edge (newer version over the tombstone).
        lake.write_raw_batch(batch_id="20260107T100000000000Z-r3-0000", run_id="r3", lines=[
            message(1, "خبر #اقتصاد #تهران", edit_date="2026-01-07T09:00:00+00:00")], **common)
        sync()
        assert ("hashtag", "telegram:777:1", "hashtag:تهران") in _edges_in_index(es)
        assert _edges_in_index(es, deleted=True) == {("mention", "telegram:777:1", "telegram:user:reporter")}
