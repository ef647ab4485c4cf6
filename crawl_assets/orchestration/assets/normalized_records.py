"""``normalized_records``: every raw batch of a source → records in the public schema (Parquet).

One Parquet part per raw batch, derived with the same code as ``crawl-assets normalize``. A part
already written by the current normalizer version is skipped, so a sync only normalizes what is new,
and a new normalizer version re-derives everything from raw without collecting again.
"""


from collections.abc import Iterator
from functools import partial
from typing import Any

import dagster as dg

from crawl_assets.core import catalog
from crawl_assets.orchestration.assets.records_preview import preview_metadata
from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
from crawl_assets.orchestration.source_checks import materialize_with_checks, source_check
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
from crawl_assets.registry.secrets import redact_secrets
from crawl_assets.orchestration.steps import StepEnv, StepFn


def normalized_records_step(platform: str) -> StepFn:
    return partial(run_normalized_records, platform)


def build_normalized_records(platform: str, raw: dg.AssetsDefinition) -> dg.AssetsDefinition:
    key = dg.AssetKey([platform, TABLE])

    @dg.multi_asset(
        name=f"{platform}__{TABLE}",
        specs=[dg.AssetSpec(key, deps=[raw.key], partitions_def=SOURCE_PARTITIONS[platform], group_name=platform,
                            kinds={"pandas", "parquet"}, description=f"{platform} records in the public schema "
                            "(docs/SCHEMA.md), one Parquet part per raw batch.")],
        check_specs=[
            source_check(platform, "no_duplicate_keys", key, blocking=True,
                         description="Each part holds one record per key (latest observation wins)."),
            source_check(platform, "records_match_schema", key, blocking=True,
                         description="Every stored row is a valid Record: built typed by construction (the "
                                     "path the fuzz tests hold equal to pydantic validation, as the CLI's), "
                                     "and a row changed after (an edit resolved, a tombstone merged) "
                                     "read back and validated as stored."),
            source_check(platform, "no_failed_batches", key, blocking=False,
                         description="No batch failed normalization and at most "
                                     f"{MAX_REJECTED_SHARE:.0%} of the items read were rejected; a source over "
                                     "it is degraded (an error, not blocking: the other batches are stored; the "
                                     "first reason in the result, all in the quarantine files)."),
        ],
        can_subset=True,
        required_resource_keys={"lake"},
    )
    def _normalized(context: dg.AssetExecutionContext) -> Iterator[Any]:
        yield from materialize_with_checks(context, run_normalized_records(platform, StepEnv.of_asset(context)))

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
        rejects = done.rejected
        duplicates.extend(done.duplicates)
        invalid.extend(done.invalid)
        q = the_lake.write_quarantine(tenant, platform, source, batch.manifest.batch_id, rejects)
        errors = sum(1 for r in rejects if r.get("error", True))
        if errors and first_rejection is None:
            first_rejection = rejection_reason(next(r for r in rejects if r.get("error", True)))
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
    degraded = f"{first_rejection}; {problem}" if problem and first_rejection else problem
    if not written and not failed:  # nothing new: the stored data is as degraded as the sync that stored it left it
        degraded = previous_degradation(env)
    elif degraded:  # shown on the source's raw partition too, where the README sends people to look
        env.log_event(dg.AssetObservation(asset_key=dg.AssetKey([platform, catalog.spec(platform).raw_asset]),
                                          partition=source, metadata={"degraded": degraded}))
    return dg.MaterializeResult(
        metadata={
            "batches_normalized": written,
            "batches_up_to_date": skipped,
            "batches_failed": failed,
            "records_written": records,
            **preview_metadata(the_lake, tenant, platform, source, TABLE, parts),
            "rejected": rejected,
            "not_posts": not_posts,
            # the files holding this sync's set-aside items: bad ones with their reason, else non-posts only
            **({"quarantine_files" if rejected else "not_posts_files": quarantine} if quarantine else {}),
            **({"first_rejection": first_rejection} if first_rejection else {}),
            **({"degraded": degraded} if degraded else {}),
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
                check_name="no_failed_batches", passed=degraded is None, severity=dg.AssetCheckSeverity.ERROR,
                description=f"{source} degraded: {degraded}" if degraded else f"{source}: every batch normalized",
                metadata={"batches_failed": failed, "rejected": rejected, "problem": degraded or "none"},
            ),
        ],
    )


def rejection_reason(rejection: dict) -> str:
    """A rejection as one short line (its reason and where; never the item itself: the instance is not erased)."""
    where = f" (line {rejection['line']})" if rejection.get("line") else ""
    return redact_secrets(" ".join(str(rejection.get("reason") or "").split()), 300) + where


def previous_degradation(env: StepEnv) -> str | None:
    """What the partition's previous materialization said was degraded (a sync that normalized nothing new)."""
    records = env.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=env.asset_key, asset_partitions=[env.partition_key]), limit=1).records
    if not records or records[0].asset_materialization is None:
        return None
    value = records[0].asset_materialization.metadata.get("degraded")
    return str(value.value) if value is not None else None
