"""Erasure meeting a batch that cannot be normalized (kept and quarantined since issue 14): it still
finishes, cuts the person out of that batch, leaves no half-written copy and writes its log entry."""

from __future__ import annotations

import gzip

import orjson

from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
from crawl_assets.erasure import Selector, erase
from crawl_assets.erasure.authors import Author
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records

SOURCE = "acme.telegram.group"


def _message(mid: int, text: str, sender: int) -> bytes:
    return orjson.dumps({"_": "Message", "id": mid, "peer_id": {"_": "PeerChannel", "channel_id": 777},
                         "from_id": {"_": "PeerUser", "user_id": sender}, "date": "2026-01-05T10:00:00+00:00",
                         "message": text, "entities": []})


def _lake_with_a_failing_batch(tmp_path) -> Lake:
    lake = Lake(str(tmp_path / "lake"))
    common = dict(tenant="acme", platform="telegram", source=SOURCE, method="api")
    good = lake.write_raw_batch(batch_id="20260105T100000000000Z-r1-0000", run_id="r1", fmt="telegram",
                                lines=[_message(1, "kept", 501), _message(2, "erase me", 43)], **common)
    normalize_batch(lake, good, lake.table_part(TABLE, "acme", "telegram", SOURCE, good.manifest.batch_id))
    # a format no normalizer knows (a newer export, say): normalization raises, the batch stays in raw
    bad = lake.write_raw_batch(batch_id="20260106T100000000000Z-r2-0000", run_id="r2", fmt="telegram-v9",
                               lines=[_message(3, "also mine 43", 43), _message(4, "someone else", 501)], **common)
    # quarantined as normalized_records does: the failed batch's reason, and a rejected item of the person's
    lake.write_quarantine("acme", "telegram", SOURCE, bad.manifest.batch_id, [
        {"name": bad.path, "reason": "batch could not be normalized: UnknownFormatError", "snippet": "", "error": True},
        {"name": bad.path, "line": 1, "reason": "bad item", "snippet": _message(3, "also mine 43", 43).decode()}])
    return lake


def _quarantine(lake: Lake) -> dict[str, bytes]:
    return {p.rsplit("/", 1)[-1]: lake.fs.cat(p) for p in lake.fs.glob(lake.path(f"quarantine/acme/telegram/{SOURCE}/*"))}


def _raw_lines(lake: Lake) -> dict[str, list[bytes]]:
    out = {}
    for path in lake.fs.glob(lake.path(f"raw/acme/telegram/{SOURCE}/*.jsonl.gz")):
        with lake.fs.open(path, "rb") as fh:
            out[path.rsplit("/", 1)[-1]] = gzip.decompress(fh.read()).splitlines()
    return out


def test_erasure_finishes_over_a_batch_that_cannot_be_normalized(tmp_path):
    lake = _lake_with_a_failing_batch(tmp_path)

    report = erase(lake, None, Selector(tenant="acme", author=Author("telegram", "43")), lock_wait_seconds=5)

    assert report.status == "complete" and report.batches_rewritten == 2
    raw = _raw_lines(lake)
    assert len(raw) == 2, f"no original and no half-written copy left beside the rewritten batches: {sorted(raw)}"
    everything = b"\n".join(line for lines in raw.values() for line in lines)
    assert b"erase me" not in everything and b"also mine" not in everything and b'"user_id":43' not in everything
    assert b"someone else" in everything and b"kept" in everything, "other people's lines stay"
    quarantined = _quarantine(lake)
    assert "20260106T100000000000Z-r2-0000.jsonl" not in quarantined, "the original's quarantine goes with it"
    assert quarantined and not [q for q in quarantined.values() if b"also mine" in q]
    assert [q for q in quarantined.values() if b"could not be normalized" in q], "the failure is quarantined again"
    rows = [r for _, t in lake.read_parts(TABLE, "acme", "telegram", SOURCE) for r in arrow_to_records(t)]
    assert {r["text"] for r in rows} == {"kept"}
    assert [e["erasure_id"] for e in lake.read_erasure_log("acme")] == [report.erasure_id]

    again = erase(lake, None, Selector(tenant="acme", author=Author("telegram", "43")), lock_wait_seconds=5)
    assert again.status == "complete" and again.batches_rewritten == 0
    assert len(_raw_lines(lake)) == 2


def test_a_lake_step_that_fails_is_logged_and_leaves_no_copy(tmp_path, monkeypatch):
    """Any failure inside the lake step (here: the quarantine cannot be written) is logged without data, the
    half-written copy is removed and the original stays, so the same erasure run again finishes it."""
    import pytest

    from crawl_assets.erasure import ErasureIncomplete

    lake = _lake_with_a_failing_batch(tmp_path)
    import shutil

    quarantine = tmp_path / "lake" / "quarantine"
    shutil.rmtree(quarantine / "acme")
    (quarantine / "acme").write_text("a file where the tenant's quarantine folder belongs")
    before = sorted(_raw_lines(lake))

    with pytest.raises(ErasureIncomplete) as failed:
        erase(lake, None, Selector(tenant="acme", author=Author("telegram", "43")), lock_wait_seconds=5)

    assert failed.value.report.status.startswith("lake step failed")
    after = sorted(_raw_lines(lake))
    assert len(after) == 2 and after[1] == before[1], "the batch that failed stays as it was, with no copy beside it"
    log = lake.read_erasure_log("acme")
    assert len(log) == 1 and log[0]["status"].startswith("lake step failed") and "43" not in orjson.dumps(log[0]["status"]).decode()

    (quarantine / "acme").unlink()
    report = erase(lake, None, Selector(tenant="acme", author=Author("telegram", "43")), lock_wait_seconds=5)
    assert report.status == "complete" and report.batches_rewritten == 1 and len(_raw_lines(lake)) == 2
    assert b"also mine" not in b"".join(line for lines in _raw_lines(lake).values() for line in lines)


def test_a_copy_left_by_a_killed_erasure_is_removed_by_the_next_one(tmp_path):
    lake = _lake_with_a_failing_batch(tmp_path)
    original = lake.raw_batches("acme", "telegram", SOURCE)[0].manifest
    lake.write_raw_batch(tenant="acme", platform="telegram", source=SOURCE, batch_id=f"{original.batch_id}-edeadbeef",
                         fmt="telegram", method="api", run_id="r1", lines=[_message(1, "kept", 501)],
                         extra={"rewritten_from": original.batch_id, "erasure_id": "deadbeef"})

    report = erase(lake, None, Selector(tenant="acme", author=Author("telegram", "43")), lock_wait_seconds=5)

    names = sorted(_raw_lines(lake))
    assert report.batches_rewritten == 2 and len(names) == 2 and not [n for n in names if "deadbeef" in n]
