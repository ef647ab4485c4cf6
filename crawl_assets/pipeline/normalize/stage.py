"""The normalize stage: every raw batch of a source not yet derived by this normalizer version → one Parquet part
of records in the public schema (``normalize_batch``: the same code as ``crawl-assets normalize``, streaming, so a
large export never sits in memory whole), rejections quarantined with their reason, and its checks. A new
normalizer version re-derives everything from raw without collecting again; one bad batch never blocks the others.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.lake import Lake, RawBatch
from crawl_assets.lake.tables import RECORDS_SCHEMA, RECORDS_STATISTICS, arrow_to_records, records_to_arrow
from crawl_assets.normalize import NormalizeContext
from crawl_assets.normalize.build import CONTEXT_MISSING
from crawl_assets.normalize.dedupe import Deduper
from crawl_assets.normalize.output import EditHistories
from crawl_assets.normalize.parallel import auto_jobs, normalize_encoded
from crawl_assets.pipeline.normalize.part import (KeyTally, add_row, earlier_versions, resolved, rows_table,
                                                 rows_with_keys, stored_histories)
from crawl_assets.pipeline.stage import Check, StageContext, StageReport
from crawl_assets.pipeline.version import NORMALIZER_VERSION
from crawl_assets.registry.models import redact_secrets
from crawl_assets.schema import Record, Rejection

TABLE = "normalized_records"


def split_source_key(key: str) -> tuple[str, str]:
    """(tenant, platform) of a partition key ``{tenant}.{platform}.{name}``."""
    tenant, platform, _ = key.split(".", 2)
    return tenant, platform


def merge_earlier(lake: Lake, batch: RawBatch, rows: list[dict[str, Any]]) -> list[int]:
    """Give rows that are not whole observations the last full observation of their key from earlier parts.

    A bare tombstone (a deletion seen by a collector, a post X names as unavailable) takes it whole, with the
    tombstone's ``deleted``/``deleted_at`` and why it is unavailable: the index then keeps the content instead
    of an empty document. A sparser observation (provenance flag ``context_missing``) keeps what it states and
    takes what it could not know (``fill_context``). Returns the positions of the rows merged; unmatched ones
    stay as they are."""
    wanted = {r["key"]: i for i, r in enumerate(rows) if _partial(r)}
    if not wanted:
        return []
    m = batch.manifest
    prior: dict[str, dict[str, Any]] = {}
    earlier = [p for p in lake.part_ids(TABLE, m.tenant, m.platform, m.source) if p < m.batch_id]
    for table in rows_with_keys(lake, TABLE, m.tenant, m.platform, m.source, earlier, wanted):
        for row in arrow_to_records(table):
            if not (row.get("metadata") or {}).get("tombstone"):
                prior[row["key"]] = row
    for key, i in wanted.items():
        if key in prior:
            row = rows[i]
            if (row.get("metadata") or {}).get("tombstone"):
                evidence = {k: v for k, v in (row.get("metadata") or {}).items() if k in ("unavailable", "x_error")}
                rows[i] = {**prior[key], "deleted": row["deleted"], "deleted_at": row["deleted_at"],
                           "provenance": row["provenance"], "metadata": {**(prior[key].get("metadata") or {}), **evidence}}
            else:
                rows[i] = fill_context(row, prior[key])
    return [i for k, i in wanted.items() if k in prior]


CONTEXT_FIELDS = ("author_id", "author_handle", "reply_to", "quote_of", "repost_of", "conversation_id")


def fill_context(row: dict[str, Any], prior: dict[str, Any]) -> dict[str, Any]:
    """A sparser observation completed by an earlier one: what it states wins (text, times, deletion, entities,
    media, each metric and metadata value it has); relations, author and metrics it leaves null, and metadata
    keys it lacks (a Discourse topic's title, category, tags), come from ``prior``."""
    out = dict(row)
    for name in CONTEXT_FIELDS:
        if out.get(name) is None:
            out[name] = prior.get(name)
    metrics, earlier = row.get("metrics") or {}, prior.get("metrics") or {}
    out["metrics"] = {k: v if v is not None else earlier.get(k) for k, v in metrics.items()}
    out["metadata"] = {**(prior.get("metadata") or {}), **(row.get("metadata") or {})}
    return out


def _partial(row: dict[str, Any]) -> bool:
    return bool((row.get("metadata") or {}).get("tombstone")) or CONTEXT_MISSING in ((row.get("provenance") or {}).get("flags") or ())


TOMBSTONE = '"tombstone":'  # in a row's metadata text (sorted-key JSON): a row merge_earlier may change
PARTIAL = f'"{CONTEXT_MISSING}"'  # in a row's provenance text: a sparser observation merge_earlier may complete


@dataclass
class BatchResult:
    rows: int = 0
    rejected: list[dict[str, Any]] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    failed: bool = False  # the batch could not be normalized at all (no part written; tried again next run)


def failed_batch(batch: RawBatch, exc: Exception) -> BatchResult:
    """The result of a batch whose normalization raised: one rejection naming the batch and the cause, so
    the batch is quarantined with its reason and the source's other batches go on."""
    reason = f"batch could not be normalized: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    return BatchResult(rejected=[Rejection(name=batch.path, reason=reason).model_dump(mode="json")], failed=True)


def normalize_batch(lake: Lake, batch: RawBatch, part: str, *, jobs: int | None = None) -> BatchResult:
    """Normalize one raw batch into its Parquet part, streaming: records are born as rows of the part's table
    (``part``; on ``jobs`` processes, by default ``auto_jobs`` of the batch's size), go through the
    (spilling) dedupe and are read into Arrow a block at a time, so a large export never sits in memory
    whole. Only rows changed after their birth (an edit resolved, a tombstone merged, an earlier version
    re-stored) are handled as dicts, and validated by pydantic as they are stored."""
    m = batch.manifest
    ctx = NormalizeContext(
        tenant=m.tenant,
        source=m.source,
        collected_at=datetime.fromisoformat(m.collected_at),
        method=m.method,
        run_id=m.run_id,
        raw_pointer=batch.path,
        **m.extra.get("normalize", {}),  # the source's normalization options, as stored with the batch
    )
    result = BatchResult()
    seen = KeyTally()  # the keys written, as hashes (a batch's keys are never held as strings)
    edits = EditHistories(m.platform)  # edited posts: every version resolved against the batch's histories
    deduper = Deduper()
    try:
        with lake.open_raw(batch) as stream:
            for block, rejections in normalize_encoded(m.format, stream, name=batch.path, context=ctx, add=add_row,
                                                       jobs=auto_jobs(m.bytes) if jobs is None else jobs):
                result.rejected += [r.model_dump(mode="json") for r in rejections]
                edits.merge(block.histories)
                deduper.add_block(block)
        # the histories earlier parts hold naming a version read here
        stored = stored_histories(lake, batch, TABLE)
        for key in deduper.holds(f"{m.platform}:{version}" for version in stored):
            edits.merge(stored[key.split(":", 1)[1]])
    except BaseException:
        deduper.close()
        raise

    def chunks() -> Iterator[pa.Table]:
        changing = pa.array(sorted(edits.keys()), pa.string()) if edits else None
        winners = deduper.winning_blocks()  # closes the spill file when exhausted; close() otherwise
        try:
            yield from born_or_flushed(winners, changing)
        finally:
            deduper.close()
        earlier = earlier_versions(lake, batch, TABLE, edits, seen.holds(edits.keys() if edits else ()))
        if earlier:
            yield flush(earlier, [False] * len(earlier))

    def born_or_flushed(winners: Iterator[bytes], changing: pa.Array | None) -> Iterator[pa.Table]:
        for lines in winners:
            table = rows_table(lines)
            keys = table.column("key")
            if (changing is not None and pc.any(pc.is_in(keys, value_set=changing)).as_py()) \
                    or pc.any(pc.match_substring(table.column("metadata"), TOMBSTONE)).as_py() \
                    or pc.any(pc.match_substring(table.column("provenance"), PARTIAL)).as_py():
                rows, born = [], []
                for row in arrow_to_records(table):
                    rows.append(resolved(edits, row))
                    born.append(rows[-1] is row)
                yield flush(rows, born)
            else:  # as born: no row to change
                seen.update(keys.to_pylist())
                yield table

    def flush(rows: list[dict[str, Any]], born: list[bool]) -> pa.Table:
        for i in merge_earlier(lake, batch, rows):
            born[i] = False
        seen.update(r["key"] for r in rows)
        table = records_to_arrow(rows)
        changed = [i for i, ok in enumerate(born) if not ok]
        for row in arrow_to_records(table.take(changed)) if changed else ():  # stored: must read back valid
            try:
                Record.model_validate(row)
            except ValueError as exc:
                result.invalid.append(f"{row.get('key')}: {str(exc).splitlines()[0]}")
        return table

    result.rows = lake.write_part_chunks(part, chunks(), RECORDS_SCHEMA, version=NORMALIZER_VERSION,
                                         statistics=RECORDS_STATISTICS)
    result.duplicates = seen.repeated(keys.column("key").to_pylist() for keys in lake.iter_part_batches(part, columns=["key"]))
    return result


MAX_REJECTED_SHARE = 0.2  # above this share of bad items among those read, no_failed_batches fails


def normalization_problem(failed: int, records: int, rejected: int) -> str | None:
    """Why a sync's normalization needs a look (a batch could not be normalized, too many items rejected),
    or None. ``rejected`` counts bad items only (not non-posts such as service messages)."""
    problems = [f"{failed} batch{'es' if failed > 1 else ''} could not be normalized"] if failed else []
    read = records + rejected
    if read and rejected / read > MAX_REJECTED_SHARE:
        problems.append(f"{rejected} of {read} items rejected ({rejected / read:.0%}, over {MAX_REJECTED_SHARE:.0%})")
    return "; ".join(problems) + " (reasons in the quarantine files)" if problems else None

def run_normalize(platform: str, ctx: StageContext) -> StageReport:
    """Normalize the source's raw batches not yet derived by this normalizer version (one part each); the
    batch ids normalized are ``extra["parts"]``."""
    the_lake, source = ctx.lake, ctx.source
    tenant, _ = split_source_key(source)
    written = skipped = records = rejected = not_posts = failed = 0
    parts: list[str] = []  # batch ids normalized by this sync
    duplicates: list[str] = []
    invalid: list[str] = []
    quarantine: list[str] = []
    first_rejection: str | None = None  # the first bad item's reason, shown wherever the source reads degraded
    for batch in the_lake.raw_batches(tenant, platform, source):
        part = the_lake.table_part(TABLE, tenant, platform, source, batch.manifest.batch_id)
        if the_lake.has_part(part, version=NORMALIZER_VERSION):
            skipped += 1
            continue
        try:
            done = normalize_batch(the_lake, batch, part)
        except Exception as exc:  # noqa: BLE001 - one bad batch never blocks the source's other batches
            done = failed_batch(batch, exc)
            failed += 1
        pa.default_memory_pool().release_unused()  # a batch's freed Arrow buffers back to the system, batch by batch
        rejects = done.rejected
        duplicates.extend(done.duplicates)
        invalid.extend(done.invalid)
        q = the_lake.write_quarantine(tenant, platform, source, batch.manifest.batch_id, rejects)
        errors = sum(1 for r in rejects if r.get("error", True))
        if errors and first_rejection is None:
            first_rejection = rejection_reason(next(r for r in rejects if r.get("error", True)))
        if q:
            quarantine.append(q)
            log = ctx.log.warning if errors else ctx.log.info
            log(f"batch {batch.manifest.batch_id}: {errors} bad input items and {len(rejects) - errors} "
                f"non-posts (e.g. service messages) set aside with their reason in {q}")
        written += not done.failed
        if not done.failed:
            parts.append(batch.manifest.batch_id)
        records += done.rows
        rejected += errors
        not_posts += len(rejects) - errors
    problem = normalization_problem(failed, records, rejected)
    degraded = f"{first_rejection}; {problem}" if problem and first_rejection else problem
    notes = {}
    if not written and not failed:  # nothing new: the stored data is as degraded as the sync that stored it left it
        previous = ctx.previous("degraded")
        degraded = str(previous) if previous is not None else None
    elif degraded:  # shown on the source's raw partition too, where the README sends people to look
        notes = {"degraded": degraded}
    return StageReport(
        metadata={
            "batches_normalized": written,
            "batches_up_to_date": skipped,
            "batches_failed": failed,
            "records_written": records,
            "rejected": rejected,
            "not_posts": not_posts,
            # the files holding this sync's set-aside items: bad ones with their reason, else non-posts only
            **({"quarantine_files" if rejected else "not_posts_files": quarantine} if quarantine else {}),
            **({"first_rejection": first_rejection} if first_rejection else {}),
            **({"degraded": degraded} if degraded else {}),
            "normalizer_version": NORMALIZER_VERSION,
        },
        checks=[
            Check("no_duplicate_keys", not duplicates, {"duplicate_keys": len(duplicates), "examples": duplicates[:10]}),
            Check("records_match_schema", not invalid, {"invalid_rows": len(invalid), "examples": invalid[:10]}),
            Check("no_failed_batches", degraded is None,
                  {"batches_failed": failed, "rejected": rejected, "problem": degraded or "none"},
                  description=f"{source} degraded: {degraded}" if degraded else f"{source}: every batch normalized"),
        ],
        source_notes=notes,
        extra={"parts": parts},
    )


def rejection_reason(rejection: dict) -> str:
    """A rejection as one short line (its reason and where; never the item itself: the instance is not erased)."""
    where = f" (line {rejection['line']})" if rejection.get("line") else ""
    return redact_secrets(" ".join(str(rejection.get("reason") or "").split()), 300) + where
