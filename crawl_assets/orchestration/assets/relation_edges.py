"""``relation_edges``: reply, quote, repost, mention and hashtag edges of a source, plus its
hashtag co-occurrence and author–hashtag participation tables (pandas → Parquet).

Kept up to date by what is new (``pipeline.relate``): with no new normalized part the step reads
and writes no table and says so (``mode``: ``up_to_date``); appended parts get their own edge files and their
counts added (``incremental``); anything else rebuilds (``full``)."""


from collections.abc import Iterator
from functools import partial
from typing import Any

import dagster as dg

from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
from crawl_assets.orchestration.source_checks import materialize_with_checks, source_check
from crawl_assets.orchestration.stage_result import run_stage
from crawl_assets.orchestration.steps import StepEnv, StepFn
from crawl_assets.pipeline.relate.tables import TABLE
from crawl_assets.pipeline.relate.stage import run_relate


def relation_edges_step(platform: str) -> StepFn:
    return partial(run_relation_edges, platform)


def build_relation_edges(platform: str, normalized: dg.AssetsDefinition) -> dg.AssetsDefinition:
    key = dg.AssetKey([platform, TABLE])

    @dg.multi_asset(
        name=f"{platform}__{TABLE}",
        specs=[dg.AssetSpec(key, deps=[normalized.key], partitions_def=SOURCE_PARTITIONS[platform], group_name=platform,
                            kinds={"pandas", "parquet"}, description=f"Relations between {platform} records (reply, "
                            "quote, repost, mention, hashtag) and co-occurrence tables, for one source.")],
        check_specs=[
            source_check(platform, "edge_sources_exist", key, blocking=True,
                         description="Every edge starts at a record of this source."),
        ],
        can_subset=True,
        required_resource_keys={"lake"},
    )
    def _edges(context: dg.AssetExecutionContext) -> Iterator[Any]:
        yield from materialize_with_checks(context, run_relation_edges(platform, StepEnv.of_asset(context)))

    return _edges


def run_relation_edges(platform: str, env: StepEnv) -> dg.MaterializeResult | None:
    """The relate stage for the step's source."""
    return run_stage(platform, env, run_relate)
