"""``normalized_records``: every raw batch of a source → records in the public schema (Parquet), a thin shell over
the normalize stage (``pipeline/normalize/stage.py``) adding a preview of the records written."""


from collections.abc import Iterator
from functools import partial
from typing import Any

import dagster as dg

from crawl_assets.orchestration.assets.records_preview import preview_metadata
from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
from crawl_assets.orchestration.source_checks import materialize_with_checks, source_check
from crawl_assets.orchestration.stage_result import run_stage
from crawl_assets.orchestration.steps import StepEnv, StepFn
from crawl_assets.pipeline.normalize.batch import MAX_REJECTED_SHARE, TABLE
from crawl_assets.pipeline.normalize.stage import run_normalize
from crawl_assets.pipeline.stage import StageContext, StageReport


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


def run_normalized_records(platform: str, env: StepEnv) -> dg.MaterializeResult | None:
    """The normalize stage for the step's source, with a preview of the records it wrote."""
    return run_stage(platform, env, run_normalize, metadata=with_preview)


def with_preview(ctx: StageContext, report: StageReport) -> dict[str, Any]:
    """The report's metadata with the preview of the parts written, after the record count."""
    tenant, platform, _ = ctx.source.split(".", 2)
    preview = preview_metadata(ctx.lake, tenant, platform, ctx.source, TABLE, report.extra["parts"])
    items = list(report.metadata.items())
    at = next(i for i, (k, _) in enumerate(items) if k == "records_written") + 1
    return {**dict(items[:at]), **preview, **dict(items[at:])}
