"""Enforce a retention policy on the lake and the index at a given instant (tests pass a later clock)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from elasticsearch import Elasticsearch

from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE
from crawl_assets.erasure.lake import rebuild_relations
from crawl_assets.index.indices import delete_expired_months
from crawl_assets.lake import Lake, layout
from crawl_assets.lake.landing import landing_deliveries, landing_events
from crawl_assets.lake.layout import sweep, tenant_folders
from crawl_assets.retention.policy import RetentionPolicy


@dataclass
class RetentionReport:
    raw_batches_deleted: int = 0
    parts_deleted: int = 0
    landed_events_deleted: int = 0
    deadletter_files_deleted: int = 0
    temp_files_deleted: int = 0
    indices_deleted: list[str] = field(default_factory=list)
    sources_touched: list[str] = field(default_factory=list)


def _batch_time(batch_id: str) -> datetime | None:
    """Collection time encoded at the start of a batch id or landed event id (``YYYYmmddTHHMMSSffffffZ-...``)."""
    try:
        return datetime.strptime(batch_id[:22], "%Y%m%dT%H%M%S%fZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _letter_time(name: str) -> datetime | None:
    """When a dead-letter file was started (``YYYYmmddTHHMMSSZ-...jsonl``)."""
    try:
        return datetime.strptime(name[:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _named(when: Callable[[str], datetime | None]) -> Callable[[str], datetime | None]:
    """``when`` of a path's file name."""
    return lambda path: when(path.rsplit("/", 1)[-1])


def enforce(lake: Lake, client: Elasticsearch | None, policy: RetentionPolicy, now: datetime) -> RetentionReport:
    """Delete what each tenant's policy no longer allows; edges are rebuilt for the sources touched."""
    report = RetentionReport()
    for tenant in sorted(set(lake.tenants()) | set(policy.tenants)):
        report.temp_files_deleted += sweep(lake, tenant_folders(tenant))  # abandoned by killed writers: not data
        rule = policy.for_tenant(tenant)
        if rule.raw_expiry_days:  # pushed webhook events are raw observations (their delivery markers go too)
            cutoff = now - timedelta(days=rule.raw_expiry_days)
            report.landed_events_deleted += lake.expire(landing_events(tenant), _named(_batch_time), cutoff)
            lake.expire(landing_deliveries(tenant), lake.modified, cutoff)
            # quarantine files hold raw snippets: they go with raw, also a failed batch's (it has no part) and
            # those whose batch is gone already
            lake.expire(layout.quarantine_file(tenant, "*", "*", "*"), _named(_batch_time), cutoff)
        if rule.normalized_days:  # dead letters are copies of records and edges
            report.deadletter_files_deleted += lake.expire(f"{layout.deadletter_dir('*', '*', tenant)}/*.jsonl",
                                                           _named(_letter_time),
                                                           now - timedelta(days=rule.normalized_days))
        for platform, source in lake.tenant_sources(tenant):
            touched = False
            if rule.raw_expiry_days:
                cutoff = now - timedelta(days=rule.raw_expiry_days)
                for batch in lake.raw_batches(tenant, platform, source):
                    if datetime.fromisoformat(batch.manifest.collected_at) < cutoff:
                        lake.remove_batch(tenant, platform, source, batch.manifest.batch_id, raw=True, marker=False)
                        report.raw_batches_deleted += 1
                        touched = True
            if rule.normalized_days:
                cutoff = now - timedelta(days=rule.normalized_days)
                for batch_id, _ in list(lake.read_parts(RECORDS_TABLE, tenant, platform, source)):
                    when = _batch_time(batch_id)
                    if when is not None and when < cutoff:
                        lake.remove_batch(tenant, platform, source, batch_id, raw=False, tables=(RECORDS_TABLE,))
                        report.parts_deleted += 1
                        touched = True
            if touched:
                rebuild_relations(lake, tenant, platform, source)
                report.sources_touched.append(source)
        if client is not None and rule.index_months:
            report.indices_deleted += delete_expired_months(client, tenant, rule.index_months, now=now)
    return report
