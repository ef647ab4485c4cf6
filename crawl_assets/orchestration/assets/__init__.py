"""Each platform's chain of assets, built from its source spec: raw → normalized_records → relation_edges →
search_index (the derived ones are platform-independent)."""

from __future__ import annotations

from functools import cache

import dagster as dg

from crawl_assets.orchestration.assets.normalized_records import build_normalized_records, normalized_records_step
from crawl_assets.orchestration.assets.relation_edges import build_relation_edges, relation_edges_step
from crawl_assets.orchestration.assets.search_index import build_search_index, search_index_step
from crawl_assets.core import catalog
from crawl_assets.orchestration.steps import StepFn
from crawl_assets.pipeline.normalize.batch import TABLE as RECORDS
from crawl_assets.pipeline.relations import TABLE as EDGES


def derived_assets(platform: str, raw: dg.AssetsDefinition, *, cluster_configured: bool = True) -> list[dg.AssetsDefinition]:
    """raw → normalized_records → relation_edges → search_index for one platform.

    ``cluster_configured``: whether an Elasticsearch cluster is configured; without one the index asset
    says so in its description and carries no checks (its step then succeeds without materializing)."""
    normalized = build_normalized_records(platform, raw)
    edges = build_relation_edges(platform, normalized)
    return [normalized, edges, build_search_index(platform, normalized, edges, cluster_configured=cluster_configured)]


def derived_steps(platform: str) -> dict[dg.AssetKey, StepFn]:
    """The plain function behind each derived asset, by asset key (the batch op runs them too)."""
    return {
        dg.AssetKey([platform, RECORDS]): normalized_records_step(platform),
        dg.AssetKey([platform, EDGES]): relation_edges_step(platform),
        dg.AssetKey([platform, "search_index"]): search_index_step(platform),
    }


@cache
def raw_step(platform: str) -> StepFn:
    """The plain function behind the raw asset of ``platform`` (the batch op runs it too)."""
    from crawl_assets.orchestration.raw_step import build_raw_step
    from crawl_assets.sdk.pull import live_collector

    spec = catalog.spec(platform)
    return build_raw_step(spec, live_collector(spec))


@cache
def raw_asset(platform: str) -> dg.AssetsDefinition:
    """The raw asset of ``platform`` (one per process, so its identity is stable)."""
    from crawl_assets.orchestration.raw_step import build_raw_asset

    return build_raw_asset(catalog.spec(platform), raw_step(platform))
