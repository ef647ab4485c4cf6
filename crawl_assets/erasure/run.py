"""One erasure: the lake first (so a re-index can never bring the data back), then the index, then the log."""

from __future__ import annotations

import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from elasticsearch import Elasticsearch

from crawl_assets.core import names
from crawl_assets.erasure.authors import Author
from crawl_assets.erasure.deadletters import ErasedSet, erase_deadletters
from crawl_assets.erasure.features import erase_feature_files
from crawl_assets.erasure.lake import LakeErasure, erase_author, erase_source
from crawl_assets.erasure.landing import erase_landed
from crawl_assets.erasure.log import erasure_key, subject_digest
from crawl_assets.erasure.releases import releases_holding
from crawl_assets.erasure.scrub import Subject, persons_of
from crawl_assets.index.documents import edge_id
from crawl_assets.index.erasure import (
    AuthorTerms, erase_documents, erase_feature_documents, erase_matching, selector_query,
)  # fmt: skip
from crawl_assets.lake import Lake
from crawl_assets.lake.layout import discovery_file, sweep, tenant_folders
from crawl_assets.locks.shared import source_lock


@dataclass(frozen=True)
class Selector:
    """Whose data: one ``author`` (a person: their stable ``author_id`` on one platform, and site where ids are
    per site) or one ``source`` key, within ``tenant``. Names are validated like everywhere else: no path,
    wildcard or other tenant gets through."""

    tenant: str
    author: Author | None = None
    source: str | None = None
    records: tuple[str, ...] = ()  # record keys (people without a stable id, picked by --author-name)

    def __post_init__(self) -> None:
        names.check_tenant(self.tenant)
        if [self.author is not None, self.source is not None, bool(self.records)].count(True) != 1:
            raise ValueError("give exactly one of author, source or records")
        if self.source is not None:
            names.check_source_key(self.source, self.tenant)
        if self.author is not None and not isinstance(self.author, Author):
            raise TypeError("author: an Author (platform, author_id[, site]), never a bare id")


class ErasureIncomplete(RuntimeError):
    """A step failed (logged in ``report.status``): the lake step half-way (every batch either rewritten or
    left as it was) or the index step after it; the same erasure run again finishes it."""

    def __init__(self, report: "ErasureReport"):
        super().__init__(report.status)
        self.report = report


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
    landed_events_scrubbed: int = 0
    temp_files_removed: int = 0
    deadletters_removed: int = 0
    personal_data_found: dict[str, int] = field(default_factory=dict)  # types of personal data the erased records held
    feature_parts_removed: int = 0
    feature_tables_removed: int = 0
    index_features_deleted: int = 0
    discovery_files_removed: int = 0
    status: str = "complete"
    sources: list[str] = field(default_factory=list)
    # by author: per source, the records with no author_id (X archives without account.js, pages read without
    # author fields...): --author cannot reach them; --source or --author-name can
    records_without_author: dict[str, int] = field(default_factory=dict)
    # releases made before this erasure that hold the subject (their owner withdraws them): id, time, folder
    releases: list[dict[str, Any]] = field(default_factory=list)
    log: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def erase(lake: Lake, client: Elasticsearch | None, selector: Selector, *, now: datetime | None = None,
          lock_wait_seconds: float = 600.0) -> ErasureReport:
    """Erase ``selector``'s data from the lake (raw and tables), derived edges, dead letters and the index;
    log it. Holds every source lock of the tenant (waiting up to ``lock_wait_seconds``, else ``SourceBusy``).
    The log's key is read first: an erasure that could not be logged does not start (``ErasureKeyError``)."""
    key = erasure_key(lake)
    sources = lake.tenant_sources(selector.tenant)
    with ExitStack() as locks:
        # the tenant's syncs write its raw batches, parts and dead-letter files: none may run meanwhile
        for _, source in sources:
            locks.enter_context(source_lock(source, wait_seconds=lock_wait_seconds))
        return _erase(lake, client, selector, sources, now, key)


def _erase(lake: Lake, client: Elasticsearch | None, selector: Selector, sources: list[tuple[str, str]],
           now: datetime | None, key: bytes) -> ErasureReport:
    report = ErasureReport(uuid.uuid4().hex[:8])
    tenant = selector.tenant
    # a killed writer's temporary file may hold part of what is erased: gone first (no sync of the tenant runs)
    report.temp_files_removed = sweep(lake, tenant_folders(tenant))
    if selector.author is not None or selector.source is not None:
        report.releases = releases_holding(lake, tenant, str(selector.author or selector.source), key)
    parts: list[LakeErasure] = []
    try:
        _erase_lake(lake, selector, sources, report, parts)
    except Exception as exc:
        # a batch left as it was (its half-written copy removed) still holds the data: logged, without data,
        # then failed; running the same erasure again redoes what is left
        report.status = f"lake step failed ({type(exc).__name__}): run the same erasure again"
        _log(lake, selector, report, None, now, key)
        raise ErasureIncomplete(report) from exc
    # discovery candidates are derived from the records (mentions may name the person): recomputed on the next run
    report.discovery_files_removed = lake.remove(*lake.glob(discovery_file(tenant, "*")))
    keys = set().union(*(p.keys for p in parts)) if parts else set()
    edges = [e for p in parts for e in p.edges]
    report.records, report.edges = len(keys), len(edges)
    report.batches_rewritten = sum(p.batches_rewritten for p in parts)
    report.batches_deleted = sum(p.batches_deleted for p in parts)
    report.lines_dropped = sum(p.lines_dropped for p in parts)
    keys |= set(selector.records)
    features = erase_feature_files(lake, tenant, keys)
    report.personal_data_found = features.personal_data
    report.feature_parts_removed, report.feature_tables_removed = features.parts_removed, features.tenant_tables_removed
    report.deadletters_removed = erase_deadletters(lake, tenant, ErasedSet(
        frozenset(keys), frozenset(edge_id(e) for e in edges), selector.author, selector.source))
    if client is not None:
        try:
            found = _erase_index(client, tenant, selector, keys, edges, report)
        except Exception as exc:
            # the lake is erased: say so in the log, without data, then fail; running it again finishes it
            report.status = f"index step failed ({type(exc).__name__}): run the same erasure again"
            _log(lake, selector, report, client, now, key)
            raise ErasureIncomplete(report) from exc
        report.deadletters_removed += erase_deadletters(lake, tenant, ErasedSet(frozenset(found), frozenset()))
    _log(lake, selector, report, client, now, key)
    return report


def _erase_lake(lake: Lake, selector: Selector, sources: list[tuple[str, str]], report: ErasureReport,
                parts: list[LakeErasure]) -> None:
    tenant = selector.tenant
    author = selector.author
    for platform, source in sources:
        if selector.source is not None:
            if source != selector.source:
                continue
            part = erase_source(lake, tenant, platform, source)
        else:
            if author is not None and platform != author.platform:
                continue  # the same id on another platform is another person
            part = erase_author(lake, tenant, platform, source, author, report.erasure_id,
                                keys=frozenset(selector.records))
            if part.other_site:
                continue  # a source of another site (forum) of the platform: not this person's
            subject = Subject.of(persons_of(platform), author.author_id if author else None, frozenset(part.item_ids))
            report.landed_events_scrubbed += erase_landed(lake, tenant, platform, source, subject)
            if selector.author is not None and part.without_author:
                report.records_without_author[source] = part.without_author
        if part.keys or part.batches_deleted or part.batches_rewritten:
            report.sources.append(source)
        parts.append(part)


def _erase_index(client: Elasticsearch, tenant: str, selector: Selector, keys: set[str], edges: list[dict[str, Any]],
                 report: ErasureReport) -> set[str]:
    report.index_records_deleted = erase_documents(client, tenant, keys, family="records")
    report.index_edges_deleted = erase_documents(client, tenant, {edge_id(e) for e in edges}, family="edges")
    author = _author_terms(selector.author)
    report.index_features_deleted = erase_feature_documents(client, tenant, keys, author=author,
                                                            source=selector.source)
    if selector.records:  # by key: erase_documents above already covers them, whenever the lake step ran
        return set()
    # what the index still holds of the subject (e.g. the lake step ran in an earlier, interrupted erasure)
    found, more_edges = erase_matching(client, tenant, selector_query(author=author, source=selector.source))
    report.index_records_deleted += len(found)
    report.index_edges_deleted += more_edges
    return found - keys


def _author_terms(author: Author | None) -> AuthorTerms | None:
    return None if author is None else AuthorTerms(author.author_id, author.platform, author.key_prefix)


def _log(lake: Lake, selector: Selector, report: ErasureReport, client: Elasticsearch | None,
         now: datetime | None, key: bytes) -> None:
    subject = str(selector.author) if selector.author is not None else selector.source or ",".join(sorted(selector.records))
    report.log = lake.append_erasure_log(selector.tenant, {
        "erasure_id": report.erasure_id,
        "at": (now or datetime.now(timezone.utc)).isoformat(),
        "tenant": selector.tenant,
        "by": "author" if selector.author is not None else "source" if selector.source is not None else "records",
        "subject": subject_digest(selector.tenant, subject, key),
        "index_erased": client is not None and report.status == "complete",
        **{k: v for k, v in report.as_dict().items()
           if k not in ("erasure_id", "log", "sources", "records_without_author", "releases")},
        "sources": len(report.sources),
        "records_without_author": sum(report.records_without_author.values()),
        "releases": [r["release_id"] for r in report.releases],
    })
