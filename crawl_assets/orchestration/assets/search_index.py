"""``search_index``: the source's records and edges in Elasticsearch, a thin shell over the index stage
(``pipeline/index/stage.py``)."""


from collections.abc import Iterator
from functools import partial
from typing import Any

import dagster as dg

from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
from crawl_assets.orchestration.source_checks import materialize_with_checks, source_check
from crawl_assets.orchestration.stage_result import run_stage
from crawl_assets.orchestration.steps import StepEnv, StepFn
from crawl_assets.pipeline.index import MISSING_CLUSTER


def index_checks(platform: str, key: dg.AssetKey) -> list[dg.AssetCheckSpec]:
    return [
        source_check(platform, "no_unaccounted_failures", key, blocking=True,
                     description="Every document sent was indexed, a no-op, or dead-lettered."),
        source_check(platform, "index_count_matches", key,
                     description="Live documents of the source in the index = its non-deleted records."),
    ]


def run_search_index(platform: str, env: StepEnv) -> dg.MaterializeResult | None:
    """The index stage, imported when it runs: the Elasticsearch client and the index modules (~26 MiB) load
    in the index step, not with the definitions."""
    from crawl_assets.pipeline.index.stage import run_index

    return run_stage(platform, env, run_index, cluster=env.resources.elasticsearch, keyed=True)


def search_index_step(platform: str) -> StepFn:
    return partial(run_search_index, platform)


def build_search_index(platform: str, normalized: dg.AssetsDefinition, edges: dg.AssetsDefinition, *,
                       cluster_configured: bool = True) -> dg.AssetsDefinition:
    """The index asset. Its output is optional: without a cluster the step logs why and what to set,
    succeeds, and the asset stays unmaterialized (no failed run, no red partition). Its checks are
    declared only when a cluster is configured, so an index that cannot run shows no checks rather
    than checks that read as passed."""
    key = dg.AssetKey([platform, "search_index"])
    description = f"{platform} records and edges of one source in Elasticsearch (per-tenant monthly indices)."
    if not cluster_configured:
        description += f"\n\nNot materialized: {MISSING_CLUSTER}."

    @dg.multi_asset(
        name=f"{platform}__search_index",
        specs=[dg.AssetSpec(key, deps=[normalized.key, edges.key], partitions_def=SOURCE_PARTITIONS[platform],
                            group_name=platform, kinds={"elasticsearch"}, description=description,
                            skippable=True)],
        check_specs=index_checks(platform, key) if cluster_configured else [],
        can_subset=True,
        required_resource_keys={"lake", "elasticsearch"},
    )
    def _index(context: dg.AssetExecutionContext) -> Iterator[Any]:
        yield from materialize_with_checks(context, run_search_index(platform, StepEnv.of_asset(context)), key)

    return _index
