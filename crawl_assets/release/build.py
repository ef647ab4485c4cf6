"""``create_release``: a query of a tenant's records frozen into a package under the release root.

Everything comes from the lake (the latest observation of each key, and the relation edges), in the lake's
order, so the same lake and query give the same bytes; the creation time in the datasheet is the one
difference between two builds. Records of people whose erasure is in the tenant's log are left out even if a
half-finished erasure left a row behind, and the lake keeps, per release, the keyed digests of the people
and sources it holds, so ``crawl-assets erase`` can name the releases made before an erasure.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import shutil
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import version as package_version
from pathlib import Path

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets import settings
from crawl_assets.core import names
from crawl_assets.core.private import make_dirs, open_new
from crawl_assets.erasure.authors import author_of
from crawl_assets.erasure.log import erasure_key, subject_digest
from crawl_assets.erasure.scrub import persons_of
from crawl_assets.lake import Lake, layout
from crawl_assets.lake.tables import EDGES_SCHEMA, RECORDS_SCHEMA
from crawl_assets.normalize.dedupe import key_hash
from crawl_assets.pipeline.reader import latest_batches
from crawl_assets.pipeline.relate.stage import TABLE as EDGES_TABLE
from crawl_assets.pipeline.version import NORMALIZER_VERSION
from crawl_assets.release import files
from crawl_assets.release.datasheet import Tally, datasheet, enricher_stamps, source_facts
from crawl_assets.release.query import ReleaseQuery
from crawl_assets.release.sheets import write_sheets

_UNSEEN = object()
RECORD_EDGES = ("reply", "quote", "repost")  # edges whose other end is a record: kept when both ends are released


class ReleaseRefused(ValueError):
    """The release cannot be made as asked (the message says why); nothing was written."""


class ReleaseTooLarge(ReleaseRefused):
    """The query picks more records than the build was allowed (``max_records``)."""


@dataclass(frozen=True)
class ReleaseSummary:
    release_id: str
    path: Path
    records: int
    ids_only: int
    edges: int
    excluded_erased: int
    subjects: int


def release_dir(tenant: str, out: str | os.PathLike[str]) -> Path:
    """``out`` under the tenant's folder of the release root (a relative name, or an absolute path inside it);
    ``ReleaseRefused`` when it leaves that folder or already exists."""
    root = (settings.release_root() / names.check_tenant(tenant)).resolve()
    path = Path(os.path.normpath(root / out))
    if os.path.commonpath([root, path]) != str(root) or path == root:
        raise ReleaseRefused(f"--out {out}: a release is written under {root} (set CRAWL_RELEASE_ROOT to move it)")
    if os.path.lexists(path):
        raise ReleaseRefused(f"--out {out}: {path} exists; a release is never written over (name a new folder)")
    return path


class _People:
    """Keyed digests of the people (and sources) met, the erased ones, and pseudonyms when asked."""

    def __init__(self, lake: Lake, query: ReleaseQuery, pseudonym_key: bytes | None):
        self.tenant, self.key = query.tenant, erasure_key(lake)
        log = lake.read_erasure_log(query.tenant)
        self.erased = {str((e.get("subject") or {}).get("hmac_sha256", "")) for e in log}
        self.erasures = len(log)
        self.seen: set[str] = set()
        self._digests: dict[str, str] = {}
        self._subjects: dict[tuple[str, str | None, str | None], str | None] = {}
        self._per_site: dict[str, bool] = {}
        self._pseudonyms: dict[str, str] = {}
        self._pseudonym = None
        if query.pseudonymize:
            if pseudonym_key is None:
                raise ReleaseRefused("--pseudonymize needs a key: set CRAWL_RELEASE_KEY_FILE to an owner-only file "
                                     "outside the lake and the package (32 bytes or more)")
            salt = query.digest().encode()
            self._pseudonym = lambda subject: "anon-" + hmac.new(pseudonym_key, salt + b"\n" + subject.encode(),
                                                                  hashlib.sha256).hexdigest()[:32]

    def digest(self, subject: str) -> str:
        found = self._digests.get(subject)
        if found is None:
            found = self._digests[subject] = subject_digest(self.tenant, subject, self.key)["hmac_sha256"]
        return found

    def subject(self, platform: str, key: str, author_id: str | None) -> str | None:
        """The person a record is of, written as erasure names them (``platform[:site]:id``); cached per person."""
        per_site = self._per_site.get(platform)
        if per_site is None:
            per_site = self._per_site[platform] = persons_of(platform).per_site
        site = key.split(":", 2)[1] if per_site and key.count(":") >= 2 else None
        cached = self._subjects.get((platform, site, author_id), _UNSEEN)
        if cached is _UNSEEN:
            author = author_of(platform, {"key": key, "author_id": author_id})
            cached = str(author) if author else f"{platform}:{author_id}" if author_id else None
            self._subjects[(platform, site, author_id)] = cached
        return cached

    def screen(self, batch: pa.RecordBatch) -> tuple[pa.RecordBatch, int]:
        """The rows whose person and source were not erased (recording both as seen), and how many were not."""
        keep, subjects = [], []
        columns = [batch.column(c).to_pylist() for c in ("key", "platform", "source", "author_id")]
        for key, platform, source, author_id in zip(*columns):
            subject = self.subject(platform, key, author_id)
            digests = (self.digest(source), self.digest(subject)) if subject else (self.digest(source),)
            ok = not any(d in self.erased for d in digests)
            keep.append(ok)
            if ok:
                subjects.append(subject)
                self.seen.update(digests)
        batch = batch.filter(pa.array(keep, pa.bool_()))
        if self._pseudonym is not None and batch.num_rows:
            ids = [self.pseudonym(s) for s in subjects]
            batch = batch.set_column(batch.schema.get_field_index("author_id"), "author_id", pa.array(ids, pa.string()))
            batch = batch.set_column(batch.schema.get_field_index("author_handle"), "author_handle",
                                     pa.nulls(batch.num_rows, pa.string()))
        return batch, len(keep) - batch.num_rows

    def pseudonym(self, subject: str | None) -> str | None:
        if subject is None or self._pseudonym is None:
            return None
        found = self._pseudonyms.get(subject)
        if found is None:
            found = self._pseudonyms[subject] = self._pseudonym(subject)
        return found


def create_release(lake: Lake, query: ReleaseQuery, out: str | os.PathLike[str], *, now: datetime | None = None,
                   pseudonym_key: bytes | None = None) -> ReleaseSummary:
    """Write the release of ``query`` to ``out`` (under the release root) and note it in the lake."""
    final = release_dir(query.tenant, out)
    people = _People(lake, query, pseudonym_key)
    make_dirs(final.parent)
    work = final.parent / f".{final.name}.building-{uuid.uuid4().hex[:8]}"
    make_dirs(work)
    try:
        summary = _build(lake, query, work, final, str(final), people, now or datetime.now(timezone.utc))
        os.rename(work, final)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return summary


def build_package(lake: Lake, query: ReleaseQuery, folder: Path, *, recipient: str, now: datetime | None = None,
                  pseudonym_key: bytes | None = None, max_records: int | None = None) -> ReleaseSummary:
    """The package of ``query`` written into the existing empty ``folder`` for ``recipient`` (the API's caller),
    noted in the lake under that name so an erasure lists it like any release. ``ReleaseTooLarge`` past
    ``max_records``; the caller removes ``folder``."""
    people = _People(lake, query, pseudonym_key)
    return _build(lake, query, folder, None, recipient, people, now or datetime.now(timezone.utc), max_records)


def _build(lake: Lake, query: ReleaseQuery, work: Path, final: Path | None, noted_as: str, people: _People,
           now: datetime, max_records: int | None = None) -> ReleaseSummary:
    tenant = query.tenant
    records = files.TableWriter(work, "records", RECORDS_SCHEMA)
    ids = files.TableWriter(work, "ids", files.IDS_SCHEMA)
    edges = files.TableWriter(work, "edges", EDGES_SCHEMA)
    tally, excluded = Tally(), 0
    released, full = _KeySet(), _KeySet()
    sources: set[tuple[str, str]] = set()
    platform = query.filter.platforms[0] if len(query.filter.platforms) == 1 else None
    try:
        for batch in latest_batches(lake, tenant, platform):
            batch, erased = people.screen(batch.filter(query.mask(batch)))
            excluded += erased
            if not batch.num_rows:
                continue
            sources.update(zip(batch.column("platform").to_pylist(), batch.column("source").to_pylist()))
            hidden = pc.is_in(batch.column("platform"), pa.array(
                sorted({p for p in batch.column("platform").to_pylist() if query.ids_only(p)}), pa.string()))
            if max_records is not None and records.rows + ids.rows + batch.num_rows > max_records:
                raise ReleaseTooLarge(f"the query picks more than {max_records} records, the most a release may hold "
                                      "here; narrow it (sources, platforms, since/until)")
            for part, ids_only in ((batch.filter(hidden), True), (batch.filter(pc.invert(hidden)), False)):
                if part.num_rows:
                    tally.add(part, ids_only)
                    (ids if ids_only else records).write(part)
                    released.add(part.column("key"))
                    if not ids_only:
                        full.add(part.column("key"))
        edge_counts = _write_edges(lake, tenant, sorted(sources), released, full, edges)
    finally:
        for writer in (records, ids, edges):
            writer.close()
    body = b"".join(files.sha256_of(work / f"{t}.{ext}")[0].encode() for t in files.TABLES for ext in ("parquet", "jsonl"))
    release_id = "rel-" + hashlib.sha256(query.digest().encode() + body).hexdigest()[:20]
    created_at = now.isoformat().replace("+00:00", "Z")
    write_sheets(work, RECORDS_SCHEMA.names, release_id, records.rows)  # copies for people, not in the id
    sheet = datasheet(release_id=release_id, created_at=created_at, query=query.describe(), tally=tally,
                      sources={s: source_facts(lake, tenant, p, s) for p, s in sorted(sources)}, edges=edge_counts,
                      erasures_before=people.erasures, excluded_erased=excluded, version=NORMALIZER_VERSION,
                      tool_version=package_version("crawl_assets"), enrichers=enricher_stamps())
    with open_new(work / files.DATASHEET, exclusive=True) as fh:
        fh.write(files.dumps(sheet))
    package = files.datapackage(work, release_id, {"records": RECORDS_SCHEMA, "ids": files.IDS_SCHEMA,
                                                   "edges": EDGES_SCHEMA}, f"Release {release_id} of tenant {tenant}")
    with open_new(work / files.DATAPACKAGE, exclusive=True) as fh:
        fh.write(files.dumps(package))
    files.write_manifest(work, release_id)
    lake.write_bytes(layout.release_entry(tenant, release_id), orjson.dumps({
        "release_id": release_id, "created_at": created_at, "path": noted_as, "query": query.describe(),
        "counts": sheet["counts"], "subjects": sorted(people.seen),
    }, option=orjson.OPT_SORT_KEYS))
    return ReleaseSummary(release_id, final or work, records.rows + ids.rows, ids.rows, edges.rows, excluded,
                          len(people.seen))


class _KeySet:
    """Record keys held as sorted 64-bit hashes (8 bytes a key, not a string each), for membership tests."""

    def __init__(self) -> None:
        self._chunks: list[np.ndarray] = []
        self._sorted: np.ndarray | None = None

    @staticmethod
    def hashes(keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
        return np.fromiter((key_hash(k) for k in keys.to_pylist()), dtype=np.uint64, count=len(keys))

    def add(self, keys: pa.Array | pa.ChunkedArray) -> None:
        self._chunks.append(self.hashes(keys))

    def member(self, hashes: np.ndarray) -> np.ndarray:
        if self._sorted is None:
            self._sorted = np.unique(np.concatenate(self._chunks)) if self._chunks else np.zeros(0, np.uint64)
            self._chunks = []
        if not len(self._sorted):
            return np.zeros(len(hashes), bool)
        at = np.minimum(np.searchsorted(self._sorted, hashes), len(self._sorted) - 1)
        return self._sorted[at] == hashes


def _write_edges(lake: Lake, tenant: str, sources: list[tuple[str, str]], released: _KeySet, full: _KeySet,
                 writer: files.TableWriter) -> Counter[str]:
    """The edges among the released records: a reply, quote or repost when both ends are released, a mention or
    hashtag when its record is released in full (an ids-only record's content stays out)."""
    counts: Counter[str] = Counter()
    for platform, source in sources:
        for batch_id in lake.part_ids(EDGES_TABLE, tenant, platform, source):
            for batch in lake.iter_part_batches(lake.table_part(EDGES_TABLE, tenant, platform, source, batch_id),
                                                batch_size=8_192):
                src, dst = _KeySet.hashes(batch.column("src")), _KeySet.hashes(batch.column("dst"))
                record_edge = pc.is_in(batch.column("type"), pa.array(RECORD_EDGES)).to_numpy(zero_copy_only=False)
                keep = np.where(record_edge, released.member(src) & released.member(dst), full.member(src))
                picked = batch.filter(pa.array(keep, pa.bool_()))
                writer.write(picked)
                counts.update(picked.column("type").to_pylist())
    return counts
