"""Retention reaches the quarantine: it holds raw snippets, so it expires with raw data, including the
quarantine of a batch that failed normalization (no part) and quarantine files whose batch is gone."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from crawl_assets.lake import Lake
from crawl_assets.lake.layout import new_batch_id
from crawl_assets.retention.enforce import enforce
from crawl_assets.retention.policy import RetentionPolicy

T0 = datetime(2026, 1, 10, tzinfo=timezone.utc)
SOURCE = "acme.x.feed"


def _quarantined(lake: Lake) -> list[str]:
    return sorted(p.rsplit("/", 1)[-1] for p in lake.fs.glob(lake.path(f"quarantine/acme/x/{SOURCE}/*.jsonl")))


def test_quarantine_expires_with_raw_even_without_a_part(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    reject = [{"name": "batch", "reason": "batch could not be normalized: UnknownFormatError", "snippet": "{...}"}]
    failed = new_batch_id("ret", 0, now=T0)  # a batch that failed normalization: raw + quarantine, no part
    lake.write_raw_batch(tenant="acme", platform="x", source=SOURCE, batch_id=failed, fmt="x-v9", method="api",
                         run_id="ret", lines=[b'{"data": []}'], collected_at=T0)
    lake.write_quarantine("acme", "x", SOURCE, failed, reject)
    orphan = new_batch_id("ret", 1, now=T0 + timedelta(days=1))  # its batch is gone (deleted by hand, say)
    lake.write_quarantine("acme", "x", SOURCE, orphan, reject)
    recent = new_batch_id("ret", 2, now=T0 + timedelta(days=40))
    lake.write_raw_batch(tenant="acme", platform="x", source=SOURCE, batch_id=recent, fmt="x-v9", method="api",
                         run_id="ret", lines=[b'{"data": []}'], collected_at=T0 + timedelta(days=40))
    lake.write_quarantine("acme", "x", SOURCE, recent, reject)
    policy = RetentionPolicy.model_validate({"tenants": {"acme": {"raw_days": 30}}})

    enforce(lake, None, policy, T0 + timedelta(days=20))
    assert _quarantined(lake) == sorted(f"{b}.jsonl" for b in (failed, orphan, recent)), "nothing old enough yet"

    report = enforce(lake, None, policy, T0 + timedelta(days=45))
    assert report.raw_batches_deleted == 1
    assert _quarantined(lake) == [f"{recent}.jsonl"], "the expired batch's and the orphan's quarantine are gone"
