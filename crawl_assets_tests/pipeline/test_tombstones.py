"""A deletion seen by a collector reaches normalized_records as the last full observation, marked deleted."""

import orjson
import dagster as dg

from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.orchestration.resources import LakeResource

SOURCE = "acme.telegram.news"


def message(mid: int, text: str) -> bytes:
    return orjson.dumps({
        "_": "Message", "id": mid, "peer_id": {"_": "PeerChannel", "channel_id": 777},
        "date": "2026-01-05T10:00:00+00:00", "message": text, "post": True, "entities": [],
    })


def deletion(mid: int) -> bytes:
    return orjson.dumps({"_": "crawl_assets.deleted", "peer_id": {"_": "PeerChannel", "channel_id": 777},
                         "id": mid, "observed_at": "2026-02-01T00:00:00+00:00"})


def test_deletion_keeps_content_and_marks_deleted(tmp_path):
    from crawl_assets.definitions import defs

    lake = Lake(str(tmp_path / "lake"))
    common = dict(tenant="acme", platform="telegram", source=SOURCE, fmt="telegram", method="api", run_id="r1")
    lake.write_raw_batch(batch_id="20260105T100000000000Z-r1-0000", lines=[message(1, "سلام #خبر"), message(2, "second")], **common)
    lake.write_raw_batch(batch_id="20260201T000000000000Z-r2-0000", lines=[deletion(1), deletion(99)], **common)

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("telegram_sources", [SOURCE])
        asset = defs.get_assets_def(dg.AssetKey(["telegram", "normalized_records"]))
        result = dg.materialize([asset], partition_key=SOURCE, instance=instance,
                                resources={"lake": LakeResource(root=str(tmp_path / "lake"))})
        assert result.success

    parts = dict(lake.read_parts("normalized_records", "acme", "telegram", SOURCE))
    later = {r["key"]: r for r in arrow_to_records(parts["20260201T000000000000Z-r2-0000"])}
    merged = later["telegram:777:1"]
    assert merged["deleted"] is True and merged["deleted_at"] == "2026-02-01T00:00:00Z"
    assert merged["text"] == "سلام #خبر"
    assert merged["created_at"] == "2026-01-05T10:00:00Z"
    assert "20260201T000000000000Z-r2-0000" in orjson.dumps(merged["provenance"]).decode(), "provenance: the deletion's batch"
    # A deletion of a message never seen stays a bare, flagged tombstone: nothing is invented.
    bare = later["telegram:777:99"]
    assert bare["deleted"] and bare["text"] == "" and bare["metadata"]["tombstone"] is True
