"""One sync job per platform: the raw asset of a source and everything derived from it.

Sync jobs run in-process: a run then costs seconds instead of a subprocess per step.
"""

from __future__ import annotations

import dagster as dg



def build_sync_job(platform: str, raw: dg.AssetsDefinition, *, include_index: bool = True) -> dg.UnresolvedAssetJobDefinition:
    selection = dg.AssetSelection.assets(raw).downstream()
    name = f"{platform}_sync"
    if not include_index:
        selection = selection - dg.AssetSelection.assets(dg.AssetKey([platform, "search_index"]))
        name = f"{platform}_sync_no_index"
    return dg.define_asset_job(
        name=name,
        selection=selection,
        executor_def=dg.in_process_executor,
        description=f"Sync one {platform} source: collect, normalize, relate"
        + (", index." if include_index else " (no index step)."),
    )
