"""Export-file sources for tests: one Telegram export (the sample) registered with the partition and resources a
sync of it needs; an X account archive (the sample tweets.js, with or without its account.js) ingested and
normalized by the pipeline's plain functions."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg

from crawl_assets.cli.demo import sample_file
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.sources.telegram.resource import TelegramResource

KEY = "acme.telegram.export"


def telegram_export_source(tmp_path: Path, instance: dg.DagsterInstance) -> tuple[Path, dict]:
    """The export file (a copy of the sample, under tenant ``acme``'s import root) and the resources."""
    from crawl_assets.sdk.exports import tenant_import_root

    (imports := tenant_import_root("acme")).mkdir(parents=True)
    export = imports / "result.json"
    shutil.copyfile(sample_file("telegram_export/result.json"), export)
    (tmp_path / "sources.yaml").write_text(
        "sources:\n  - {name: export, tenant: acme, platform: telegram, kind: export_file, identifier: result.json}\n")
    instance.add_dynamic_partitions("telegram_sources", [KEY])
    resources = {"lake": LakeResource(root=str(tmp_path / "lake")), "registry": RegistryResource(path=str(tmp_path / "sources.yaml")),
                 "telegram": TelegramResource.from_env()}  # export files need no account
    return export, resources


ARCHIVE_ACCOUNT = ('window.YTD.account.part0 = [ {"account": {"email": "owner@example.com", "createdVia": "web", '
                   '"username": "sample_owner", "accountId": "7700112233", "createdAt": "2015-01-01T00:00:00.000Z", '
                   '"accountDisplayName": "Sample Owner"}} ]')


def x_archive_source(tmp_path: Path, with_account: bool):
    """(lake, source key, normalized rows, the tweets.js path) of tenant ``acme``'s archive, as a sync stores it."""
    from crawl_assets import settings
    from crawl_assets.lake import Lake
    from crawl_assets.lake.tables import arrow_to_records
    from crawl_assets.sources.export_file.collect import ingest_export_file
    from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
    from crawl_assets.registry import SourceEntry
    from crawl_assets.registry.store import Registry
    from crawl_assets.sdk.exports import tenant_import_root

    folder = tenant_import_root("acme") / "archive" / "data"
    folder.mkdir(parents=True)
    (folder / "tweets.js").write_bytes(sample_file("x_archive_tweets.js").read_bytes())
    if with_account:
        (folder / "account.js").write_text(ARCHIVE_ACCOUNT)
    lake = Lake(settings.lake_root())
    entry = SourceEntry(name="arch", tenant="acme", platform="x", kind="export_file",
                        identifier="archive/data/tweets.js", options={"format": "x-archive"})
    batch = ingest_export_file(entry, Registry(path=tmp_path / "sources.yaml"), lake, "run1").batch
    normalize_batch(lake, batch, lake.table_part(TABLE, "acme", "x", entry.key, batch.manifest.batch_id))
    rows = [r for _, t in lake.read_parts(TABLE, "acme", "x", entry.key) for r in arrow_to_records(t)]
    return lake, entry.key, rows, folder / "tweets.js"
