"""What ``status`` shows of each source's latest ``normalized_records`` materialization: the problem its
``no_failed_batches`` check reports (a batch that could not be normalized, too many rejected items, with the
first rejection's reason), which makes an otherwise healthy source *degraded*."""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from crawl_assets.registry import SourceEntry


def normalization_problems(instance: dg.DagsterInstance, entries: Sequence[SourceEntry]) -> dict[str, str]:
    """Source key -> problem, for the sources whose latest normalization has one (one lookup per source)."""
    from crawl_assets.pipeline.normalize.stage import TABLE, normalization_problem

    out: dict[str, str] = {}
    for entry in entries:
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey([entry.platform, TABLE]), asset_partitions=[entry.key]),
            limit=1).records
        if not records or records[0].asset_materialization is None:
            continue
        meta = {k: v.value for k, v in records[0].asset_materialization.metadata.items()}
        if meta.get("degraded"):
            out[entry.key] = str(meta["degraded"])
            continue
        numbers = [meta.get(k) for k in ("batches_failed", "records_written", "rejected")]
        if all(isinstance(n, int) for n in numbers):
            problem = normalization_problem(*numbers)  # type: ignore[arg-type]
            if problem:
                out[entry.key] = problem
    return out
