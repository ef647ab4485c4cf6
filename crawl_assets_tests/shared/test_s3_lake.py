"""The lake's own operations on S3 (a local moto server through the real s3fs/botocore clients): one version
seen by every reader, and what a writer killed mid-upload leaves (nothing committed, swept later)."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from crawl_assets.lake import Lake
from crawl_assets.lake.landing import claim_delivery
from crawl_assets.lake.layout import source_folders, sweep
from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.shared.s3_server import BUCKET, s3_prefix

WRITE = """
import os, signal, sys
from crawl_assets.lake import Lake
from crawl_assets.lake.landing import claim_delivery
big = sys.argv[3] != "-"  # over s3fs's 5 MB block: a multipart upload
lines = [b'{"id": "%d", "blob": "%s"}' % (i, os.urandom(3000).hex().encode() if big else b"") for i in range(2500 if big else 50)]
if sys.argv[3] == "kill":  # SIGKILL mid-upload: parts sent, the completing request not
    import s3fs.core
    s3fs.core.S3FileSystem.default_block_size = 5 << 20  # parts of 5 MB (S3's least), as a 50 MB+ batch gets
    upload = s3fs.core.S3File._upload_chunk
    def dying(self, final=False):
        if final and self.parts:
            os.kill(os.getpid(), signal.SIGKILL)
        return upload(self, final)
    s3fs.core.S3File._upload_chunk = dying
Lake(sys.argv[1]).write_raw_batch(tenant="acme", platform="x", source="acme.x.tl", batch_id=sys.argv[2],
                                  fmt="x-v2", method="api", run_id=None, lines=lines)
"""


def write_elsewhere(lake_url: str, batch_id: str, mode: str = "") -> int:
    """A raw batch written by another process (another machine: it shares only the S3 server)."""
    return subprocess.run([sys.executable, "-c", WRITE, lake_url, batch_id, mode or "-"], cwd=REPO, timeout=120).returncode


def test_a_long_lived_reader_sees_every_batch_written_by_other_processes(s3_lake):
    reader = Lake(s3_lake)  # e.g. a sensor or the API server: lists the lake again and again
    assert reader.raw_batches("acme", "x", "acme.x.tl") == []
    assert write_elsewhere(s3_lake, "20260101T000000000000Z-a-0001") == 0
    assert [b.manifest.batch_id for b in reader.raw_batches("acme", "x", "acme.x.tl")] == ["20260101T000000000000Z-a-0001"]
    assert write_elsewhere(s3_lake, "20260101T000001000000Z-b-0001") == 0
    batches = reader.raw_batches("acme", "x", "acme.x.tl")
    assert [b.manifest.items for b in batches] == [50, 50]
    with reader.open_raw(batches[1]) as fh:
        assert fh.read().count(b"\n") == 50


def test_a_writer_killed_mid_upload_commits_nothing(s3_lake, s3_env):
    lake = Lake(s3_lake)
    assert write_elsewhere(s3_lake, "20260101T000000000000Z-a-0001", "kill") == -9
    # it died mid-write: its multipart upload is open on the server, with parts in it...
    uploads = s3_env.client().list_multipart_uploads(Bucket=BUCKET, Prefix=s3_prefix(s3_lake)).get("Uploads", [])
    assert [u["Key"].rsplit("/", 1)[1][:5] for u in uploads] == [".tmp-"]
    # ...and no object: no data under any name, no manifest, so no batch
    assert s3_env.keys(s3_prefix(s3_lake)) == []
    assert lake.raw_batches("acme", "x", "acme.x.tl") == []
    assert write_elsewhere(s3_lake, "20260101T000000000000Z-a-0002", "big") == 0  # the re-run commits a whole batch
    (batch,) = lake.raw_batches("acme", "x", "acme.x.tl")
    assert batch.manifest.items == 2500 and batch.manifest.bytes > 5 << 20
    with lake.open_raw(batch) as fh:
        assert sum(1 for _ in fh) == 2500
    assert sweep(lake, source_folders("acme", "x", "acme.x.tl")) == 0  # nothing of a temporary name is left
    assert sorted(k.rsplit("/", 1)[1] for k in s3_env.keys(s3_prefix(s3_lake))) == [
        "20260101T000000000000Z-a-0002.jsonl.gz", "20260101T000000000000Z-a-0002.meta.json"]


def test_local_lake_listings_are_unchanged(tmp_path):
    lake = Lake(str(tmp_path / "lake"))  # the default: a folder, as before
    lake.write_raw_batch(tenant="acme", platform="x", source="acme.x.tl", batch_id="20260101T000000000000Z-a-0001",
                         fmt="x-v2", method="api", run_id=None, lines=[b"{}"])
    assert [b.manifest.items for b in lake.raw_batches("acme", "x", "acme.x.tl")] == [1]
    assert (tmp_path / "lake" / "raw" / "acme" / "x" / "acme.x.tl" / "20260101T000000000000Z-a-0001.meta.json").exists()


def test_one_of_many_webhook_receivers_claims_a_delivery(s3_lake):
    lake = Lake(s3_lake)
    with ThreadPoolExecutor(8) as pool:  # eight receivers get the same delivery at once (a platform's retries)
        claims = list(pool.map(lambda _: claim_delivery(lake, tenant="acme", platform="intercom", source="acme.intercom.inbox",
                                                        key="ab" * 16), range(8)))
    assert sorted(claims) == [False] * 7 + [True]
    assert not claim_delivery(lake, tenant="acme", platform="intercom", source="acme.intercom.inbox", key="ab" * 16)
