"""One Telegram export-file source (the sample export) registered for a test: the file, the partition and the
resources a sync of it needs."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg

from crawl_assets.cli.demo import sample_file
from crawl_assets.orchestration.resources.lake import LakeResource, RegistryResource
from crawl_assets.sources.telegram.resource import TelegramResource

KEY = "acme.telegram.export"


def telegram_export_source(tmp_path: Path, instance: dg.DagsterInstance) -> tuple[Path, dict]:
    """The export file (a copy of the sample, under tenant ``acme``'s import root) and the resources."""
    from crawl_assets.sources.exports import tenant_import_root

    (imports := tenant_import_root("acme")).mkdir(parents=True)
    export = imports / "result.json"
    shutil.copyfile(sample_file("telegram_export/result.json"), export)
    (tmp_path / "sources.yaml").write_text(
        "sources:\n  - {name: export, tenant: acme, platform: telegram, kind: export_file, identifier: result.json}\n")
    instance.add_dynamic_partitions("telegram_sources", [KEY])
    resources = {"lake": LakeResource(root=str(tmp_path / "lake")), "registry": RegistryResource(path=str(tmp_path / "sources.yaml")),
                 "telegram": TelegramResource.from_env()}  # export files need no account
    return export, resources
