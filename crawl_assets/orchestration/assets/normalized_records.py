"""``normalized_records``: every raw batch of a source → records in the public schema (Parquet).

One Parquet part per raw batch, derived with the same code as ``crawl-assets normalize``. A part
already written by the current normalizer version is skipped, so a sync only normalizes what is new,
and a new normalizer version re-derives everything from raw without collecting again.
"""


from functools import partial

import dagster as dg

from crawl_assets.orchestration.assets.records_preview import preview_metadata
from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
# normalize_batch is looked up here at call time (a fault-injection site patches this module's name)
from crawl_assets.pipeline.normalize import (
    MAX_REJECTED_SHARE,
    TABLE,
    failed_batch,
    normalization_problem,
    normalize_batch,
    split_source_key,
)
from crawl_assets.pipeline.version import NORMALIZER_VERSION
from crawl_assets.orchestration.steps import StepEnv, StepFn


def normalized_records_step(platform: str) -> StepFn:
    return partial(run_normalized_records, platform)


def build_normalized_records(platform: str, raw: dg.AssetsDefinition) -> dg.AssetsDefinition:
    key = dg.AssetKey([platform, TABLE])

    @dg.asset(
        key=key,
        deps=[raw],
        partitions_def=SOURCE_PARTITIONS[platform],
        group_name=platform,
        kinds={"pandas", "parquet"},
        description=f"{platform} records in the public schema (docs/SCHEMA.md), one Parquet part per raw batch.",
        check_specs=[
            dg.AssetCheckSpec("no_duplicate_keys", asset=key, blocking=True,
                              description="Each part holds one record per key (latest observation wins)."),
            dg.AssetCheckSpec("records_match_schema", asset=key, blocking=True,
                              description="Every stored row is a valid Record: built typed by construction (the "
                                          "path the fuzz tests hold equal to pydantic validation, as the CLI's), "
                                          "and a row changed after (an edit resolved, a tombstone merged) "
                                          "read back and validated as stored."),
            dg.AssetCheckSpec("no_failed_batches", asset=key, blocking=False,
                              description="No batch failed normalization and at most "
                                          f"{MAX_REJECTED_SHARE:.0%} of the items read were rejected (a warning: "
                                          "the other batches are stored; reasons in the quarantine files)."),
        ],
        required_resource_keys={"lake"},
    )
    def _normalized(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        return run_normalized_records(platform, StepEnv.of_asset(context))

    return _normalized


def run_normalized_records(platform: str, env: StepEnv) -> dg.MaterializeResult:
    """Normalize the source's raw batches not yet derived by this normalizer version (one part each)."""
    the_lake = env.resources.lake.lake()
    source = env.partition_key
    tenant, _ = split_source_key(source)
    written = skipped = records = rejected = not_posts = failed = 0
    parts: list[str] = []  # batch ids normalized by this sync
    duplicates: list[str] = []
    invalid: list[str] = []
    quarantine: list[str] = []
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
        rejects = done.rejected
        duplicates.extend(done.duplicates)
        invalid.extend(done.invalid)
        q = the_lake.write_quarantine(tenant, platform, source, batch.manifest.batch_id, rejects)
        errors = sum(1 for r in rejects if r.get("error", True))
        if q:
            quarantine.append(q)
            log = env.log.warning if errors else env.log.info
            log(f"batch {batch.manifest.batch_id}: {errors} bad input items and {len(rejects) - errors} "
                f"non-posts (e.g. service messages) set aside with their reason in {q}")
        written += not done.failed
        if not done.failed:
            parts.append(batch.manifest.batch_id)
        records += done.rows
        rejected += errors
        not_posts += len(rejects) - errors
    problem = normalization_problem(failed, records, rejected)
    return dg.MaterializeResult(
        metadata={
            "batches_normalized": written,
            "batches_up_to_date": skipped,
            "batches_failed": failed,
            "records_written": records,
            **preview_metadata(the_lake, tenant, platform, source, TABLE, parts),
            "rejected": rejected,
            "not_posts": not_posts,
            "quarantine_files": quarantine,
            "normalizer_version": NORMALIZER_VERSION,
        },
        check_results=[
            dg.AssetCheckResult(
                check_name="no_duplicate_keys", passed=not duplicates,
                metadata={"duplicate_keys": len(duplicates), "examples": duplicates[:10]},
            ),
            dg.AssetCheckResult(
                check_name="records_match_schema", passed=not invalid,
                metadata={"invalid_rows": len(invalid), "examples": invalid[:10]},
            ),
            dg.AssetCheckResult(
                check_name="no_failed_batches", passed=problem is None, severity=dg.AssetCheckSeverity.WARN,
                metadata={"batches_failed": failed, "rejected": rejected, "problem": problem or "none"},
            ),
        ],
    )
