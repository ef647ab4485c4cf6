"""Erasure in the lake: raw batches rewritten without the erased items (under a new batch id), their
derived parts re-derived, a source's folders removed, edges and summary tables rebuilt."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
import pyarrow.parquet as pq

from crawl_assets.pipeline.index.stage import marker_body
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE
from crawl_assets.pipeline.normalize.stage import failed_batch, normalize_batch
from crawl_assets.pipeline.relate.stage import TABLE as EDGES_TABLE
from crawl_assets.pipeline.relate.stage import write_relations
from crawl_assets.core import catalog
from crawl_assets.erasure.authors import Author, site_of
from crawl_assets.erasure.scrub import DROP, Subject, mentions, persons_of, scrub
from crawl_assets.lake import Lake, RawBatch
from crawl_assets.lake.layout import index_marker
from crawl_assets.lake.tables import arrow_to_records


@dataclass
class LakeErasure:
    """What the lake side removed: record keys and edge rows (for the index), batches touched."""

    keys: set[str] = field(default_factory=set)
    item_ids: set[str] = field(default_factory=set)  # PersonIds.item_id of each erased record
    edges: list[dict[str, Any]] = field(default_factory=list)
    batches_rewritten: int = 0
    batches_deleted: int = 0
    lines_dropped: int = 0
    without_author: int = 0  # records with no author_id, which an erasure by author cannot tell apart
    other_site: bool = False  # the source is of another site (forum) than the author's: left untouched


def _edge_rows(lake: Lake, tenant: str, platform: str, source: str) -> list[dict[str, Any]]:
    return [row for _, t in lake.read_parts(EDGES_TABLE, tenant, platform, source) for row in arrow_to_records(t)]


def erase_source(lake: Lake, tenant: str, platform: str, source: str) -> LakeErasure:
    """Remove everything the lake holds for one source."""
    out = LakeErasure()
    for _, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source):
        out.keys |= set(table.column("key").to_pylist())
    out.edges = _edge_rows(lake, tenant, platform, source)
    out.batches_deleted = len(lake.raw_batches(tenant, platform, source))
    lake.remove_source(tenant, platform, source)
    return out


def _read(lake: Lake, batch: RawBatch) -> bytes:
    with lake.open_raw(batch) as fh:
        return fh.read()


def _scrub_document(data: bytes, subject: Subject) -> list[bytes] | None:
    """A whole-document batch (an export file) scrubbed, as its one line; None if it is not one document."""
    head, sep, body = data.partition(b"=") if data.lstrip().startswith(b"window.") else (b"", b"", data)
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    kept = scrub(doc, subject)
    return [head + sep + b" " + orjson.dumps([] if kept is DROP else kept) if sep else orjson.dumps(kept)]


def scrub_lines(data: bytes, subject: Subject) -> list[bytes]:
    """JSON lines without ``subject`` (a line that is wholly theirs goes; a line that is not JSON stays)."""
    out = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            out.append(line)  # not JSON: kept as is, checked by re-normalizing below
            continue
        kept = scrub(value, subject)
        if kept is not DROP:
            out.append(line if kept == value else orjson.dumps(kept))
    return out


def _scrubbed(lake: Lake, batch: RawBatch, subject: Subject) -> list[bytes] | None:
    """The batch's lines without ``subject``; None when nothing in it is theirs."""
    data = _read(lake, batch)
    if not subject.may_occur_in(data):
        return None
    lines = _scrub_document(data, subject) if batch.manifest.method == "export" else None
    lines = lines if lines is not None else scrub_lines(data, subject)
    original = [line for line in data.splitlines() if line.strip()] if batch.manifest.method != "export" else [data]
    return None if lines == original else lines


def _names_subject(line: bytes, subject: Subject) -> bool:
    """Whether a raw line still holds one of the spellings of the subject's person id as a whole token (not
    inside another). Item ids are not looked for: a short message id ("2") would match unrelated numbers."""
    return any(re.search(rb"(?<![0-9A-Za-z_])" + re.escape(p.encode()) + rb"(?![0-9A-Za-z_])", line)
               for p in subject.persons if p)


def _rewrite(lake: Lake, batch: RawBatch, lines: list[bytes], subject: Subject, erased: set[str],
             erasure_id: str, out: LakeErasure) -> None:
    """Write ``batch`` again as ``lines`` (scrubbed) under a new id, re-derive it, drop the old one. The
    original goes last: until then any failure removes the copy, so the same erasure run again starts over."""
    m = batch.manifest
    # the new id sorts right after the original's (before any later batch): collection order, by which the
    # latest observation of a key wins, must not change because a batch was rewritten
    new_id = f"{m.batch_id}-e{erasure_id}"
    # an export file is recognised by its content hash: keep the original's, or the next sync re-imports it
    extra = {**m.extra, "rewritten_from": m.batch_id, "erasure_id": erasure_id,
             **({"source_sha256": m.extra.get("source_sha256") or m.sha256} if m.method == "export" else {})}
    written: list[RawBatch] = []

    def write(batch_id: str, body: list[bytes]) -> RawBatch:
        written.append(lake.write_raw_batch(
            tenant=m.tenant, platform=m.platform, source=m.source, batch_id=batch_id, fmt=m.format, method=m.method,
            run_id=m.run_id, lines=body, collected_at=datetime.fromisoformat(m.collected_at), extra=extra))
        return written[-1]

    def keep_only(body: list[bytes]) -> RawBatch:
        out.lines_dropped += len(lines) - len(body)
        _delete_batch(lake, written[-1])
        return write(new_id + "b", body)

    ids = subject.items | subject.persons
    try:
        new = write(new_id, lines)
        try:
            rows, rejects = _derive(lake, new)
        except Exception as exc:  # noqa: BLE001 - a batch normalization cannot read
            # nothing tells which items are the subject's: every line still naming them goes
            kept_lines = [line for line in lines if not _names_subject(line, subject)]
            new = keep_only(kept_lines) if kept_lines != lines else new
            rows, rejects = [], failed_batch(new, exc).rejected
        left = {r["key"] for r in rows} & erased
        if left:  # an item the scrub could not cut out: drop its whole line
            bad = {r["provenance"].get("raw_line") for r in rows if r["key"] in left}
            new = keep_only([line for n, line in enumerate(lines, start=1) if n not in bad])
            rows, rejects = _derive(lake, new)
            if {r["key"] for r in rows} & erased:
                raise RuntimeError(f"erasure {erasure_id}: batch {m.batch_id} still yields erased records")
        lake.write_quarantine(m.tenant, m.platform, m.source, new.manifest.batch_id,
                              [r for r in rejects if not mentions(f"{r.get('snippet', '')} {r['reason']}", ids)])
        if lake.exists(index_marker(m.tenant, m.platform, m.source, m.batch_id)):
            lake.write_bytes(index_marker(m.tenant, m.platform, m.source, new.manifest.batch_id),
                             marker_body(f"erase{erasure_id}"))
    except BaseException:
        for copy in written:
            _delete_batch(lake, copy)
        raise
    _delete_batch(lake, batch)
    out.batches_rewritten += 1


def _derive(lake: Lake, batch: RawBatch) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Normalize a rewritten batch into its part (as ``normalized_records`` does); its rows and rejections."""
    m = batch.manifest
    part = lake.table_part(RECORDS_TABLE, m.tenant, m.platform, m.source, m.batch_id)
    result = normalize_batch(lake, batch, part)
    with lake.open_read(part) as fh:
        rows = list(arrow_to_records(pq.read_table(fh)))
    return rows, result.rejected


def _delete_batch(lake: Lake, batch: RawBatch) -> None:
    m = batch.manifest
    lake.remove_batch(m.tenant, m.platform, m.source, m.batch_id, raw=True, tables=(RECORDS_TABLE,))


def _remove_interrupted_copies(lake: Lake, tenant: str, platform: str, source: str) -> None:
    """A rewritten copy whose original still exists: an erasure killed before it finished (the original goes
    last). Removed, so the erasure run again rewrites the original once."""
    batches = lake.raw_batches(tenant, platform, source)
    present = {b.manifest.batch_id for b in batches}
    for batch in batches:
        if batch.manifest.extra.get("rewritten_from") in present:
            _delete_batch(lake, batch)


def erase_author(lake: Lake, tenant: str, platform: str, source: str, author: Author | None, erasure_id: str, *,
                 keys: frozenset[str] = frozenset()) -> LakeErasure:
    """Remove a person (or the records ``keys``) from one source of their platform: every raw batch that holds
    anything of theirs (their items, rejected ones too, and their id wherever the platform puts it)
    rewritten, parts re-derived, edges rebuilt. A source of another site than a per-site author's is left
    as it is (``other_site``): the same id there is someone else."""
    out = LakeErasure()
    _remove_interrupted_copies(lake, tenant, platform, source)
    sites: set[str | None] = set()
    holding: set[str] = set()  # batches whose records include the erased ones
    for batch_id, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source,
                                           columns=["key", "native_id", "author_id"]):
        for row in table.to_pylist():
            sites.add(site_of(platform, row["key"]))
            out.without_author += not row["author_id"]
            if row["key"] in keys or (author is not None and author.owns(row)):
                holding.add(batch_id)
                out.keys.add(row["key"])
                out.item_ids.add(persons_of(platform).item_id(row["key"], str(row["native_id"])))
    if author is not None and author.site is not None and author.site not in (sites or _raw_sites(lake, tenant, platform, source)):
        out.other_site = True
        return out
    subject = Subject.of(persons_of(platform), author.author_id if author else None, frozenset(out.item_ids))
    before = _edge_rows(lake, tenant, platform, source)
    for batch in lake.raw_batches(tenant, platform, source):
        lines = _scrubbed(lake, batch, subject)
        if lines is None and batch.manifest.batch_id in holding:
            # nothing the scrub can cut (a page of HTML): rewritten as is, so the lines that still yield the
            # erased records are dropped whole after re-normalizing
            data = _read(lake, batch)
            lines = [data] if batch.manifest.method == "export" else [line for line in data.splitlines() if line.strip()]
        if lines is not None:
            _rewrite(lake, batch, lines, subject, out.keys, erasure_id, out)
    if not out.batches_rewritten:
        return out
    rebuild_relations(lake, tenant, platform, source)
    after = {(e["type"], e["src"], e["dst"]) for e in _edge_rows(lake, tenant, platform, source)}
    out.edges = [e for e in before if (e["type"], e["src"], e["dst"]) not in after]
    return out


_CRAWL_HEAD = re.compile(rb'^\{"crawl":(\{[^{}]*\})')


def _raw_sites(lake: Lake, tenant: str, platform: str, source: str) -> set[str | None]:
    """The sites a source without records is of: its first raw line's envelope field (the forum host)."""
    for batch in lake.raw_batches(tenant, platform, source)[:1]:
        spec = catalog.catalog().formats().get(batch.manifest.format)
        with lake.open_raw(batch) as fh:
            match = _CRAWL_HEAD.match(fh.read(4096))  # the envelope comes first in every line (wrap_line)
        if spec is not None and spec.envelope_field and match:
            try:
                site = orjson.loads(match.group(1)).get(spec.envelope_field)
            except orjson.JSONDecodeError:
                continue
            return {site.strip()} if isinstance(site, str) else set()
    return set()


def rebuild_relations(lake: Lake, tenant: str, platform: str, source: str) -> None:
    """The source's edges and summary tables from its current records (what ``relation_edges`` writes)."""
    write_relations(lake, tenant, platform, source)
