"""The live collector of ``hackernews_items_raw`` (Dagster glue around :func:`sync_search`)."""

from __future__ import annotations

import dagster as dg

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sources.hackernews.sync import RAW_FORMAT, sync_search
from crawl_assets.sources.pull import collect_with


def collect(context: dg.AssetExecutionContext, entry: SourceEntry, lake: Lake) -> dg.MaterializeResult:
    """Sync one Hacker News search into the lake; the checkpoint moves only past stored batches."""
    return collect_with(context, entry, lake, resource=context.resources.hackernews, sync=sync_search, fmt=RAW_FORMAT)
