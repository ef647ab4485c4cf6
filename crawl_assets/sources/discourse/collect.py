"""The live collector of ``discourse_posts_raw`` (Dagster glue around :func:`sync_forum`)."""

from __future__ import annotations

import dagster as dg

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sources.discourse.sync import RAW_FORMAT, sync_forum
from crawl_assets.sources.pull import collect_with


def collect(context: dg.AssetExecutionContext, entry: SourceEntry, lake: Lake) -> dg.MaterializeResult:
    """Sync one Discourse forum into the lake; the checkpoint moves only past stored batches."""
    return collect_with(context, entry, lake, resource=context.resources.discourse, sync=sync_forum, fmt=RAW_FORMAT)
