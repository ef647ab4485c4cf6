"""Platform-independent assets, built once per platform on top of its raw asset."""

from __future__ import annotations

import dagster as dg

from crawl_assets.assets.normalized_records import build_normalized_records
from crawl_assets.assets.relation_edges import build_relation_edges
from crawl_assets.assets.search_index import build_search_index


def derived_assets(platform: str, raw: dg.AssetsDefinition) -> list[dg.AssetsDefinition]:
    """raw → normalized_records → relation_edges → search_index for one platform."""
    normalized = build_normalized_records(platform, raw)
    edges = build_relation_edges(platform, normalized)
    return [normalized, edges, build_search_index(platform, normalized, edges)]
