"""One erasure: the lake first (so a re-index can never bring the data back), then the index, then the log."""

from __future__ import annotations

import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from elasticsearch import Elasticsearch

from crawl_assets.erasure.deadletters import ErasedSet, erase_deadletters
from crawl_assets.erasure.lake import LakeErasure, erase_author, erase_source, tenant_sources
from crawl_assets.erasure.log import append_entry, subject_digest
from crawl_assets.index.erasure import erase_documents, erase_matching, selector_query
from crawl_assets.index.sink import edge_id
from crawl_assets.lake import Lake
from crawl_assets.scheduling.locks import source_lock


@dataclass(frozen=True)
class Selector:
    """Whose data: one ``author`` (platform id or handle) or one ``source`` key, within ``tenant``."""

    tenant: str
    author: str | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        if (self.author is None) == (self.source is None):
            raise ValueError("give exactly one of author or source")
        if self.source is not None and not self.source.startswith(f"{self.tenant}."):
            raise ValueError(f"source {self.source!r} does not belong to tenant {self.tenant!r}")


@dataclass
class ErasureReport:
    erasure_id: str
    records: int = 0
    edges: int = 0
    index_records_deleted: int = 0
    index_edges_deleted: int = 0
    batches_rewritten: int = 0
    batches_deleted: int = 0
    lines_dropped: int = 0
    deadletters_removed: int = 0
    sources: list[str] = field(default_factory=list)
    log: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def erase(lake: Lake, client: Elasticsearch | None, selector: Selector, *, now: datetime | None = None,
          lock_wait_seconds: float = 600.0) -> ErasureReport:
    """Erase ``selector``'s data from the lake (raw and tables), derived edges, dead letters and the index;
    log it. Holds every source lock of the tenant (waiting up to ``lock_wait_seconds``, else ``SourceBusy``)."""
    sources = tenant_sources(lake, selector.tenant)
    with ExitStack() as locks:
        # the tenant's syncs write its raw batches, parts and dead-letter files: none may run meanwhile
        for _, source in sources:
            locks.enter_context(source_lock(source, wait_seconds=lock_wait_seconds))
        return _erase(lake, client, selector, sources, now)


def _erase(lake: Lake, client: Elasticsearch | None, selector: Selector, sources: list[tuple[str, str]],
           now: datetime | None) -> ErasureReport:
    report = ErasureReport(uuid.uuid4().hex[:8])
    tenant = selector.tenant
    parts: list[LakeErasure] = []
    for platform, source in sources:
        if selector.source is not None:
            if source != selector.source:
                continue
            part = erase_source(lake, tenant, platform, source)
        else:
            assert selector.author is not None
            part = erase_author(lake, tenant, platform, source, selector.author, report.erasure_id)
        if part.keys or part.batches_deleted:
            report.sources.append(source)
        parts.append(part)
    keys = set().union(*(p.keys for p in parts)) if parts else set()
    edges = [e for p in parts for e in p.edges]
    report.records, report.edges = len(keys), len(edges)
    report.batches_rewritten = sum(p.batches_rewritten for p in parts)
    report.batches_deleted = sum(p.batches_deleted for p in parts)
    report.lines_dropped = sum(p.lines_dropped for p in parts)
    if client is not None:
        report.index_records_deleted = erase_documents(client, tenant, keys, family="records")
        report.index_edges_deleted = erase_documents(client, tenant, {edge_id(e) for e in edges}, family="edges")
        # what the index still holds of the subject (e.g. the lake step ran in an earlier, interrupted erasure)
        found, more_edges = erase_matching(client, tenant, selector_query(author=selector.author, source=selector.source))
        report.index_records_deleted += len(found)
        report.index_edges_deleted += more_edges
        keys = keys | found
    report.deadletters_removed = erase_deadletters(lake, tenant, ErasedSet(
        frozenset(keys), frozenset(edge_id(e) for e in edges), selector.author, selector.source))
    subject = selector.author if selector.author is not None else selector.source
    report.log = append_entry(lake, tenant, {
        "erasure_id": report.erasure_id,
        "at": (now or datetime.now(timezone.utc)).isoformat(),
        "tenant": tenant,
        "by": "author" if selector.author is not None else "source",
        "subject": subject_digest(str(subject)),
        "index_erased": client is not None,
        **{k: v for k, v in report.as_dict().items() if k not in ("erasure_id", "log", "sources")},
        "sources": len(report.sources),
    })
    return report
