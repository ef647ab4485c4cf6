"""Runs the ``web_channel`` kind against the t.me/s stand-in through the Telegram collector (no Dagster), and reads
back what any Telegram source stored as normalized records (raw batches → parts → the latest row per key)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
from crawl_assets.pipeline.reader import latest_batches
from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.sync import CollectEnv, Collected
from crawl_assets.sources.telegram.collect import collect
from crawl_assets.sources.telegram.resource import TelegramResource
from crawl_assets_tests.sources.test_plain_collector import Log, MemoryCheckpointer


def web_entry(name: str, identifier: str, *, tenant: str = "default", horizon: int | None = None,
              **options: Any) -> SourceEntry:
    return SourceEntry(name=name, tenant=tenant, platform="telegram", kind="web_channel", identifier=identifier,
                       policy={"history_horizon_days": horizon}, options=options)


def normalize_all(lake: Lake, entry: SourceEntry) -> list[dict[str, Any]]:
    """Every raw batch of ``entry`` without a part normalized; then its records, the latest observation of each key."""
    done = set(lake.part_ids(TABLE, entry.tenant, "telegram", entry.key))
    for batch in lake.raw_batches(entry.tenant, "telegram", entry.key):
        if batch.manifest.batch_id not in done and batch.manifest.items:
            normalize_batch(lake, batch, lake.table_part(TABLE, entry.tenant, "telegram", entry.key, batch.manifest.batch_id))
    return [r for b in latest_batches(lake, entry.tenant, "telegram", entry.key) for r in arrow_to_records(b)]


@dataclass
class WebHarness:
    lake: Lake
    resource: TelegramResource
    entry: SourceEntry
    checkpointer: MemoryCheckpointer = field(default_factory=lambda: MemoryCheckpointer({}))
    log: Log = field(default_factory=Log)
    runs: int = 0

    def sync(self, **resource: Any) -> Collected:
        self.runs += 1
        env = CollectEnv(self.lake, f"webrun{self.runs}", self.checkpointer, self.log)
        res = self.resource.model_copy(update=resource) if resource else self.resource
        return collect(res, self.entry, env)

    @property
    def state(self) -> dict[str, Any]:
        return self.checkpointer.saved[-1]

    def records(self) -> list[dict[str, Any]]:
        return normalize_all(self.lake, self.entry)


def web_harness(tmp_path: Path, url: str, entry: SourceEntry, **resource: Any) -> WebHarness:
    settings = {"web_base_url": url, "web_request_interval_seconds": 0.0, "lock_dir": str(tmp_path / "locks"), **resource}
    return WebHarness(Lake(str(tmp_path / "lake")), TelegramResource(**settings), entry)
