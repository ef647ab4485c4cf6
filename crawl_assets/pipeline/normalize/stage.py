"""The normalize stage: every raw batch of a source not yet derived by this normalizer version → one Parquet part
of records in the public schema (``batch.py``, the same code as ``crawl-assets normalize``), rejections
quarantined with their reason, and its checks. A new normalizer version re-derives everything from raw without
collecting again; one bad batch never blocks the others.
"""

import pyarrow as pa

# normalize_batch is looked up here at call time (a fault-injection site patches this module's name)
from crawl_assets.pipeline.normalize.batch import (
    TABLE,
    failed_batch,
    normalization_problem,
    normalize_batch,
    split_source_key,
)
from crawl_assets.pipeline.stage import Check, StageContext, StageReport
from crawl_assets.pipeline.version import NORMALIZER_VERSION
from crawl_assets.registry.models import redact_secrets


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
