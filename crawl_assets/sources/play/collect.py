"""The live collector of ``play_reviews_raw`` (Dagster glue around :func:`sync_app`)."""

from __future__ import annotations

import dagster as dg

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sources.play.sync import RAW_FORMAT, sync_app
from crawl_assets.sources.pull import collect_with


def collect(context: dg.AssetExecutionContext, entry: SourceEntry, lake: Lake) -> dg.MaterializeResult:
    """Sync one app's reviews into the lake; a coverage gap is reported in metadata and as a warning."""
    return collect_with(context, entry, lake, resource=context.resources.play, sync=sync_app, fmt=RAW_FORMAT)
