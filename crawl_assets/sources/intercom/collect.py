"""The live collector of ``intercom_conversations_raw`` (Dagster glue around :func:`sync_workspace`)."""

from __future__ import annotations

import dagster as dg

from crawl_assets.lake import Lake
from crawl_assets.registry import SourceEntry
from crawl_assets.sources.intercom.sync import RAW_FORMAT, sync_workspace
from crawl_assets.sources.pull import collect_with


def collect(context: dg.AssetExecutionContext, entry: SourceEntry, lake: Lake) -> dg.MaterializeResult:
    """Sync one Intercom workspace into the lake; the checkpoint moves only past stored batches."""
    return collect_with(context, entry, lake, resource=context.resources.intercom, sync=sync_workspace, fmt=RAW_FORMAT)
