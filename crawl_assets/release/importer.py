"""``import_release``: a release package brought into a tenant of this installation.

The package is verified against its manifest first; then each line of ``records.jsonl`` is read bounded,
validated as a ``Record`` and stored as the tenant's normalized records of one source per platform,
``{tenant}.{platform}.{release id}``, their relation edges derived as after a sync. A record keeps its
provenance; ``metadata.release`` says which release (and tenant and source) it came from. A bad line is
quarantined with its reason, the rest goes on; ids-only entries are counted (they need hydrating);
records of people erased in the tenant are left out (its erasure log, with the erasure key).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from crawl_assets import settings
from crawl_assets.core import names
from crawl_assets.core import catalog
from crawl_assets.core.files import bounded_lines, open_regular
from crawl_assets.erasure.authors import author_of
from crawl_assets.erasure.log import erasure_key, subject_digest
from crawl_assets.lake import Lake
from crawl_assets.lake.layout import new_batch_id
from crawl_assets.lake.tables import records_to_arrow
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE
from crawl_assets.pipeline.relate.stage import write_relations
from crawl_assets.pipeline.version import NORMALIZER_VERSION
from crawl_assets.release.files import DATASHEET
from crawl_assets.release.verify import PackageInvalid, read_manifest, verify_package
from crawl_assets.schema.record import Record, snippet_of

PART_ROWS = 20_000  # records per normalized part written (bounds the dicts held while importing)


@dataclass
class ImportReport:
    release_id: str
    tenant: str
    records: int = 0
    sources: list[str] = field(default_factory=list)
    rejected: int = 0
    ids_only: int = 0
    left_out_erased: int = 0
    quarantine: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # rejections that name no platform (not quarantined)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def release_source(tenant: str, platform: str, release_id: str) -> str:
    return names.check_source_key(f"{tenant}.{platform}.{release_id}", tenant)


class _Importer:
    def __init__(self, lake: Lake, tenant: str, release_id: str):
        self.lake, self.tenant, self.release_id = lake, tenant, release_id
        self.report = ImportReport(release_id, tenant)
        log = lake.read_erasure_log(tenant)
        self.erased = {str((e.get("subject") or {}).get("hmac_sha256", "")) for e in log}
        self.key = erasure_key(lake) if self.erased else b""
        self.pending: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.rejections: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.seq = 0

    def reject(self, platform: str | None, line: int, reason: str, raw: bytes) -> None:
        self.report.rejected += 1
        row = {"name": "records.jsonl", "line": line, "reason": reason, "snippet": snippet_of(raw)}
        if platform in catalog.platforms():
            self.rejections[platform].append(row)
        elif len(self.report.problems) < 100:
            self.report.problems.append(f"records.jsonl line {line}: {reason}")

    def take(self, line: int, raw: bytes) -> None:
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            return self.reject(None, line, f"not JSON: {exc}", raw)
        if not isinstance(doc, dict):
            return self.reject(None, line, "not a JSON object", raw)
        platform = doc.get("platform")
        if platform not in catalog.platforms():
            return self.reject(None, line, f"platform {str(platform)[:40]!r} is not installed here", raw)
        origin = {"id": self.release_id, "tenant": doc.get("tenant"), "source": doc.get("source")}
        metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        doc |= {"tenant": self.tenant, "source": release_source(self.tenant, platform, self.release_id),
                "metadata": {**metadata, "release": origin}}
        try:
            record = Record.model_validate(doc).model_dump(mode="json")
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return self.reject(platform, line, f"not a record: {where}: {first.get('msg')}", raw)
        if self.erased and self._erased(platform, record):
            self.report.left_out_erased += 1
            return None
        self.pending[platform].append(record)
        if len(self.pending[platform]) >= PART_ROWS:
            self.flush(platform)
        return None

    def _erased(self, platform: str, record: dict[str, Any]) -> bool:
        author = author_of(platform, record)
        return author is not None and subject_digest(self.tenant, str(author), self.key)["hmac_sha256"] in self.erased

    def flush(self, platform: str) -> None:
        rows, self.pending[platform] = self.pending[platform], []
        if not rows:
            return
        self.seq += 1
        source = release_source(self.tenant, platform, self.release_id)
        part = self.lake.table_part(RECORDS_TABLE, self.tenant, platform, source, new_batch_id("release", self.seq))
        self.lake.write_part(part, records_to_arrow(rows), version=NORMALIZER_VERSION)
        self.report.records += len(rows)
        if source not in self.report.sources:
            self.report.sources.append(source)

    def finish(self) -> None:
        for platform in list(self.pending):
            self.flush(platform)
        for platform, rows in self.rejections.items():
            source = release_source(self.tenant, platform, self.release_id)
            self.seq += 1
            where = self.lake.write_quarantine(self.tenant, platform, source, new_batch_id("release", self.seq), rows)
            if where:
                self.report.quarantine.append(where)
        for source in self.report.sources:
            _, platform, _ = source.split(".")
            write_relations(self.lake, self.tenant, platform, source)


def import_release(lake: Lake, tenant: str, folder: str | Path) -> ImportReport:
    """Verify the package in ``folder`` and import its records into ``tenant`` (``PackageInvalid`` when it does not
    verify or was imported into this tenant already)."""
    names.check_tenant(tenant)
    folder = Path(folder)
    release_id, problems = verify_package(folder)
    if problems:
        raise PackageInvalid(f"{folder} does not match its manifest: {problems[0]} (crawl-assets release verify "
                             f"lists every difference); nothing imported")
    listed = {e["name"] for e in read_manifest(folder)["files"]}
    if missing := sorted({"records.jsonl", "ids.jsonl", DATASHEET} - listed):
        raise PackageInvalid(f"{folder}: the manifest lists no {missing[0]}: not a release package; nothing imported")
    if any(lake.part_ids(RECORDS_TABLE, tenant, p, release_source(tenant, p, release_id)) for p in catalog.platforms()):
        raise PackageInvalid(f"release {release_id} is imported into tenant {tenant!r} already; nothing imported")
    importer = _Importer(lake, tenant, release_id)
    with open_regular(folder / "records.jsonl") as fh:
        for line, raw in bounded_lines(fh, settings.max_line_bytes()):
            if raw is None:
                importer.reject(None, line, f"longer than CRAWL_MAX_LINE_BYTES ({settings.max_line_bytes()})", b"")
            elif raw.strip():
                importer.take(line, raw)
    with open_regular(folder / "ids.jsonl") as fh:
        importer.report.ids_only = sum(1 for _, raw in bounded_lines(fh, settings.max_line_bytes())
                                       if raw is None or raw.strip())
    importer.finish()
    return importer.report
