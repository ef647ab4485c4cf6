"""Enforce a retention policy on the lake and the index at a given instant (tests pass a later clock)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from elasticsearch import Elasticsearch

from crawl_assets.assets.normalized_records import TABLE as RECORDS_TABLE
from crawl_assets.erasure.lake import rebuild_relations, tenant_sources
from crawl_assets.index.bootstrap import delete_expired_months
from crawl_assets.lake import Lake
from crawl_assets.lake.tempfiles import sweep, tenant_folders
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


def _modified(lake: Lake, path: str) -> datetime | None:
    try:
        stamp = lake.fs.modified(path)
    except (OSError, NotImplementedError):
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def _expire_files(lake: Lake, pattern: str, when: Callable[[str], datetime | None], cutoff: datetime) -> int:
    """Delete the files matching ``pattern`` whose time (``when`` of the path) is before ``cutoff``; how many."""
    gone = 0
    for path in lake.fs.glob(lake.path(pattern)):
        stamp = when(path)
        if stamp is not None and stamp < cutoff:
            lake.fs.rm(path)
            gone += 1
    return gone


def _remove(lake: Lake, *relative: str) -> None:
    for rel in relative:
        if lake.exists(rel):
            lake.fs.rm(lake.path(rel))


def enforce(lake: Lake, client: Elasticsearch | None, policy: RetentionPolicy, now: datetime) -> RetentionReport:
    """Delete what each tenant's policy no longer allows; edges are rebuilt for the sources touched."""
    report = RetentionReport()
    tenants = {p.split("/")[-1] for area in ("raw", "landing") for p in lake.fs.glob(lake.path(f"{area}/*"))}
    for tenant in sorted(tenants | set(policy.tenants)):
        report.temp_files_deleted += sweep(lake, tenant_folders(tenant))  # abandoned by killed writers: not data
        rule = policy.for_tenant(tenant)
        if rule.raw_expiry_days:  # pushed webhook events are raw observations (their delivery markers go too)
            cutoff = now - timedelta(days=rule.raw_expiry_days)
            report.landed_events_deleted += _expire_files(lake, f"landing/{tenant}/*/*/*/*.json",
                                                          lambda p: _batch_time(p.rsplit("/", 1)[-1]), cutoff)
            _expire_files(lake, f"landing/{tenant}/*/*/_deliveries/*", lambda p: _modified(lake, p), cutoff)
            # quarantine files hold raw snippets: they go with raw, also a failed batch's (it has no part) and
            # those whose batch is gone already
            _expire_files(lake, f"quarantine/{tenant}/*/*/*.jsonl", lambda p: _batch_time(p.rsplit("/", 1)[-1]), cutoff)
        if rule.normalized_days:  # dead letters are copies of records and edges
            report.deadletter_files_deleted += _expire_files(lake, f"deadletter/*/*/{tenant}/*.jsonl",
                                                             lambda p: _letter_time(p.rsplit("/", 1)[-1]),
                                                             now - timedelta(days=rule.normalized_days))
        for platform, source in tenant_sources(lake, tenant):
            src = f"{tenant}/{platform}/{source}"
            touched = False
            if rule.raw_expiry_days:
                cutoff = now - timedelta(days=rule.raw_expiry_days)
                for batch in lake.raw_batches(tenant, platform, source):
                    if datetime.fromisoformat(batch.manifest.collected_at) < cutoff:
                        _remove(lake, f"raw/{src}/{batch.manifest.batch_id}.jsonl.gz",
                                f"raw/{src}/{batch.manifest.batch_id}.meta.json",
                                f"quarantine/{src}/{batch.manifest.batch_id}.jsonl")
                        report.raw_batches_deleted += 1
                        touched = True
            if rule.normalized_days:
                cutoff = now - timedelta(days=rule.normalized_days)
                for batch_id, _ in list(lake.read_parts(RECORDS_TABLE, tenant, platform, source)):
                    when = _batch_time(batch_id)
                    if when is not None and when < cutoff:
                        _remove(lake, lake.table_part(RECORDS_TABLE, tenant, platform, source, batch_id),
                                f"quarantine/{src}/{batch_id}.jsonl", f"index_state/{src}/{batch_id}.done")
                        report.parts_deleted += 1
                        touched = True
            if touched:
                rebuild_relations(lake, tenant, platform, source)
                report.sources_touched.append(source)
        if client is not None and rule.index_months:
            report.indices_deleted += delete_expired_months(client, tenant, rule.index_months, now=now)
    return report
