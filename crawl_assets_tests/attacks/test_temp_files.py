"""Temporary files (issue 15, item 8): a writer killed between creating its temporary file and moving it into
place left ``.tmp-*`` files in the tables (and raw) areas for good; they may hold part of a person's data.
The next sync of the source sweeps them, and so do retention and erasure."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pytest

from crawl_assets import settings
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import RECORDS_SCHEMA, records_to_arrow
from crawl_assets.orchestration.resources import LakeResource, RegistryResource

SOURCE = "acme.x.dump"
ARCHIVE = 'window.YTD.tweets.part0 = [{"tweet": {"id_str": "1", "id": "1", "full_text": "hi", ' \
          '"created_at": "Wed Apr 17 06:00:00 +0000 2024", "entities": {}}}]\n'


def _killed_writers(lake: Lake, secret: str) -> None:
    """Two writers SIGKILLed mid-write: a Parquet part (tables area) and a raw batch (raw area)."""
    for kind in ("part", "raw"):
        pid = os.fork()
        if pid == 0:  # the child dies inside the write, as a killed run worker does
            def die():
                os.kill(os.getpid(), signal.SIGKILL)

            if kind == "part":
                def chunks():
                    yield records_to_arrow([{"key": "x:9", "text": secret, "platform": "x", "tenant": "acme"}])
                    die()
                    yield pa.table({})

                lake.write_part_chunks(lake.table_part("normalized_records", "acme", "x", SOURCE, "b1"), chunks(),
                                       RECORDS_SCHEMA, version="v")
            else:
                def lines():
                    yield f'{{"text": "{secret}"}}'.encode()
                    die()

                lake.write_raw_batch(tenant="acme", platform="x", source=SOURCE, batch_id="b1", fmt="x-v2",
                                     method="api", run_id="r", lines=lines())
            os._exit(1)
        os.waitpid(pid, 0)


def _temps(root: str) -> list[Path]:
    return sorted(Path(root).rglob(".tmp-*"))


@pytest.fixture
def lake(tmp_path) -> Lake:
    lake = Lake(settings.lake_root())
    _killed_writers(lake, "joe@example.com")
    assert len(_temps(lake.root)) == 2, "the killed writers left their temporary files"
    return lake


def test_the_next_sync_of_the_source_sweeps_what_killed_writers_left(lake, tmp_path):
    from crawl_assets.orchestration.assets import raw_asset

    x_posts_raw = raw_asset("x")
    from crawl_assets.sources.x.resource import XResource

    folder = Path(os.environ["CRAWL_IMPORT_ROOT"]) / "acme"
    folder.mkdir(parents=True)
    (folder / "tweets.js").write_text(ARCHIVE)
    (tmp_path / "tweets.js").write_text(ARCHIVE)  # where the code before the import root looked for it
    registry = tmp_path / "sources.yaml"
    registry.write_text("sources:\n  - {name: dump, tenant: acme, platform: x, kind: export_file, "
                        "identifier: tweets.js, options: {format: x-archive}}\n")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("x_sources", [SOURCE])
        assert dg.materialize([x_posts_raw], partition_key=SOURCE, instance=instance, resources={
            "lake": LakeResource(), "registry": RegistryResource(path=str(registry)), "x": XResource()}).success
    assert _temps(lake.root) == []


def test_retention_sweeps_abandoned_temporary_files_and_keeps_live_ones(lake):
    from crawl_assets.retention import RetentionPolicy, enforce
    from crawl_assets.lake.layout import temp_name

    live = Path(lake.root) / "tables" / "relation_edges" / "acme" / "x" / SOURCE / temp_name()  # this process: alive
    live.parent.mkdir(parents=True)
    live.write_bytes(b"")
    old = Path(lake.root) / "raw" / "acme" / "x" / SOURCE / ".tmp-0123456789abcdef"  # earlier naming, 2 h idle
    old.write_bytes(b"")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    from datetime import datetime, timezone

    report = enforce(lake, None, RetentionPolicy(), datetime.now(timezone.utc))
    assert report.temp_files_deleted == 3 and _temps(lake.root) == [live]


def test_erasure_removes_temporary_files_that_may_hold_the_erased_person(lake):
    from crawl_assets.erasure import Selector, erase
    from crawl_assets.erasure.authors import Author

    erase(lake, None, Selector(tenant="acme", author=Author("x", "someone")))
    assert _temps(lake.root) == []
