import gzip
import io

import pytest

from crawl_assets.lake import Lake
from crawl_assets.lake.layout import BATCH_ID, new_batch_id
from crawl_assets.lake.tables import arrow_to_records, records_to_arrow


@pytest.fixture(params=["local", "memory"])
def lake(request, tmp_path):
    if request.param == "local":
        return Lake(str(tmp_path / "lake"))
    return Lake(f"memory://lake-{tmp_path.name}")


def test_raw_batch_kept_exactly_and_never_overwritten(lake):
    lines = ['{"id": 1, "text": "سلام"}'.encode(), b'{"id":2}']
    batch = lake.write_raw_batch(tenant="t", platform="x", source="t.x.s", batch_id="b1", fmt="x-v2",
                                 method="api", run_id="r1", lines=lines)
    assert batch.manifest.items == 2
    with lake.open_raw(batch) as fh:
        assert fh.read() == b"".join(line + b"\n" for line in lines)
    with pytest.raises(FileExistsError):
        lake.write_raw_batch(tenant="t", platform="x", source="t.x.s", batch_id="b1", fmt="x-v2",
                             method="api", run_id="r2", lines=[b"{}"])
    assert [b.manifest.batch_id for b in lake.raw_batches("t", "x", "t.x.s")] == ["b1"]


def test_stream_batch_and_order(lake):
    payload = b'{"messages": []}' * 100_000
    lake.write_raw_batch(tenant="t", platform="telegram", source="s", batch_id="b2", fmt="telegram-export",
                         method="export", run_id=None, stream=io.BytesIO(payload))
    lake.write_raw_batch(tenant="t", platform="telegram", source="s", batch_id="b1", fmt="telegram-export",
                         method="export", run_id=None, stream=io.BytesIO(b"{}"))
    batches = lake.raw_batches("t", "telegram", "s")
    assert [b.manifest.batch_id for b in batches] == ["b1", "b2"]
    assert batches[1].manifest.bytes == len(payload)
    with lake.open_raw(batches[1]) as fh:
        assert fh.read() == payload


def test_batch_without_manifest_is_not_visible(tmp_path):
    lake = Lake(str(tmp_path))
    d = tmp_path / "raw" / "t" / "x" / "s"
    d.mkdir(parents=True)
    (d / "half.jsonl.gz").write_bytes(gzip.compress(b"{}\n"))  # a crash before the manifest
    assert lake.raw_batches("t", "x", "s") == []


def test_batch_ids_sort_by_time_and_are_path_safe():
    a, b = new_batch_id("RUN-1234-abcd", 0), new_batch_id("RUN-1234-abcd", 1)
    assert BATCH_ID.match(a) and BATCH_ID.match(b) and a < b and "/" not in a


def test_parts_versioned_and_records_round_trip(lake):
    rec = {"key": "x:1", "platform": "x", "tenant": "t", "source": "t.x.s", "kind": "post", "native_id": "1",
           "author_id": "9", "author_handle": "a", "created_at": "2024-01-02T03:04:05Z", "edited_at": None,
           "deleted_at": None, "deleted": False, "text": "سلام #تست", "text_clean": "سلام #تست", "lang": "fa",
           "reply_to": None, "quote_of": None, "repost_of": None, "conversation_id": "x:1",
           "hashtags": ["تست"], "mentions": [], "urls": [], "media": [{"type": "photo", "id": "m"}],
           "metrics": {"likes": 3}, "metadata": {"b": 1, "a": [1, 2]}, "provenance": {"method": "api"}, "enrichment": {}}
    table = records_to_arrow([rec])
    part = lake.table_part("normalized_records", "t", "x", "t.x.s", "b1")
    lake.write_part(part, table, version="v1")
    assert lake.has_part(part, version="v1") and not lake.has_part(part, version="v2")
    [(batch_id, back)] = list(lake.read_parts("normalized_records", "t", "x", "t.x.s"))
    assert batch_id == "b1"
    [row] = list(arrow_to_records(back))
    assert {k: row[k] for k in rec} == rec
