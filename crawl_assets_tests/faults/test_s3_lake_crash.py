"""The lake on S3 (a local moto server through the real s3fs/botocore clients): S3 has no atomic rename, so
the write-once, manifest-last design rests on an object appearing whole when its upload completes (a move is
a server-side copy, then a delete). A sync SIGKILLed while writing to S3 (a raw batch's upload, between the
copy and the delete, before the manifest, a normalized part's upload, an index marker), re-run until done,
ends with the same records, edges and index as an uninterrupted sync, and no temporary object is left."""

from __future__ import annotations

import uuid

import pytest

from crawl_assets_tests.faults.harness import ForkServer, SyncWorld, differences, take_snapshot
from crawl_assets_tests.shared.s3_server import BUCKET

CHAIN = ["s3.raw_upload@1", "s3.raw_copied@1", "lake.raw_without_manifest@1", "s3.raw_upload@3",
         "s3.part_upload@1", "s3.marker_copied@1", "normalize.part_written@1", "index.bulk_applied@1"]


@pytest.mark.slow
def test_syncs_killed_mid_write_to_s3_converge_to_the_clean_run(scratch, x_server, s3_env, es_cluster):
    fork_server = ForkServer(scratch)  # started after s3_env: its children find the S3 server
    try:
        clean = SyncWorld(scratch / "clean", x_server.url, es_cluster.url, fork_server, telegram_messages=300,
                          x_pages_per_run=500, telegram_pages_per_run=200,
                          lake_url=f"s3://{BUCKET}/clean-{uuid.uuid4().hex[:8]}")
        clean.run_until_done(max_runs=4)
        want = take_snapshot(clean.lake, es_cluster.client)
        assert not want.problems, want.problems
        assert len(want.records) > 500 and want.edges and len(want.index_records) == len(want.records)
        assert s3_env.keys(clean.lake.root.removeprefix(f"s3://{BUCKET}/")), "the clean run wrote nothing to S3"
        es_cluster.wipe()

        faulted = SyncWorld(scratch / "faulted", x_server.url, es_cluster.url, fork_server, telegram_messages=300,
                            x_pages_per_run=2, telegram_pages_per_run=2,
                            lake_url=f"s3://{BUCKET}/faulted-{uuid.uuid4().hex[:8]}")
        fired = faulted.run_kill_chain(CHAIN)
        assert len(fired) == len(CHAIN), f"not reached: {sorted(set(CHAIN) - set(fired))}"
        faulted.x_pages_per_run, faulted.telegram_pages_per_run = 500, 200  # the recovery in whole runs
        faulted.run_until_done(max_runs=12)
        got = take_snapshot(faulted.lake, es_cluster.client)
        assert differences(got, want) == []
        # nothing of ours on the local disk but the instance and the registry; the killed writers' temporary
        # objects were swept by the later syncs
        faulted_keys = s3_env.keys(faulted.lake.root.removeprefix(f"s3://{BUCKET}/"))
        assert not [k for k in faulted_keys if "/.tmp-" in k]
        assert not (scratch / "faulted" / "lake").exists()
    finally:
        fork_server.close()
