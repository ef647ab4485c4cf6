"""The datasheet of a release: what it holds and how it was collected, from the lake alone (sources and their
collection windows, what the collectors and the normalizer recorded as missing, versions, counts, terms)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.lake import Lake
from crawl_assets.lake import layout
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE
from crawl_assets.release.terms import terms_of

DERIVER_KEY = b"crawl_assets.deriver"


@dataclass
class Tally:
    """Counts of the released records per platform, language, month and source, with each source's span."""

    platforms: Counter[str] = field(default_factory=Counter)
    langs: Counter[str] = field(default_factory=Counter)
    months: Counter[str] = field(default_factory=Counter)
    sources: Counter[str] = field(default_factory=Counter)
    ids_only: Counter[str] = field(default_factory=Counter)
    deleted: int = 0
    span: dict[str, list[str]] = field(default_factory=dict)

    def add(self, batch: pa.RecordBatch, ids_only: bool) -> None:
        platform = batch.column("platform").to_pylist()
        self.platforms.update(platform)
        if ids_only:
            self.ids_only.update(platform)
        self.langs.update(v or "unknown" for v in batch.column("lang").to_pylist())
        created = batch.column("created_at")
        self.months.update(pc.strftime(created.cast(pa.timestamp("us")), format="%Y-%m").to_pylist())  # UTC months
        self.deleted += pc.sum(pc.fill_null(batch.column("deleted"), False).cast(pa.int64())).as_py() or 0
        for source in set(batch.column("source").to_pylist()):
            picked = pc.filter(created, pc.equal(batch.column("source"), source))
            self.sources[source] += len(picked)
            low, high = (pc.min(picked).as_py(), pc.max(picked).as_py())
            old = self.span.get(source)
            self.span[source] = [min(old[0], _iso(low)), max(old[1], _iso(high))] if old else [_iso(low), _iso(high)]


def _iso(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


def source_facts(lake: Lake, tenant: str, platform: str, source: str) -> dict[str, Any]:
    """How one source was collected: its raw batches' window, methods and formats, the gaps its collector wrote
    into the batches' manifests, the lines the normalizer rejected (quarantined) and the normalizer versions."""
    batches = [b.manifest for b in lake.raw_batches(tenant, platform, source)]
    gaps = [{"batch": m.batch_id, **{k: v for k, v in sorted(m.extra.items()) if "gap" in k}}
            for m in batches if any("gap" in k and v not in (False, None, "", []) for k, v in m.extra.items())]
    rejected = sum(data.count(b"\n") for _, data in
                   lake.files(f"{layout.source_dir(layout.QUARANTINE, tenant, platform, source)}/*.jsonl"))
    versions = sorted({lake.part_metadata(lake.table_part(RECORDS_TABLE, tenant, platform, source, i))
                       .get(DERIVER_KEY, b"").decode() or "unknown"
                       for i in lake.part_ids(RECORDS_TABLE, tenant, platform, source)})
    return {
        "platform": platform,
        "collected_from": min((m.collected_at for m in batches), default=None),
        "collected_to": max((m.collected_at for m in batches), default=None),
        "raw_batches": len(batches),
        "methods": sorted({m.method for m in batches}),
        "formats": sorted({m.format for m in batches}),
        "collector_gaps": gaps,
        "rejected_lines": rejected,
        "normalizer_versions": versions,
    }


def enricher_stamps() -> list[dict[str, Any]]:
    """The configured enrichers and their stamps (their features stay in the features area, not in the records)."""
    from crawl_assets.enrich.config import load_enrichers

    out = []
    for enricher in load_enrichers():
        try:
            out.append({"enricher": enricher.name, "stamp": enricher.stamp})
        except Exception as exc:  # an unusable enricher (missing model): said, not hidden
            out.append({"enricher": getattr(enricher, "name", "?"), "stamp": None, "unusable": type(exc).__name__})
    return sorted(out, key=lambda e: e["enricher"])


def datasheet(*, release_id: str, created_at: str, query: dict[str, Any], tally: Tally,
              sources: dict[str, dict[str, Any]], edges: Counter[str], erasures_before: int,
              excluded_erased: int, version: str, tool_version: str, enrichers: list[dict[str, Any]]
              ) -> dict[str, Any]:
    platforms = sorted(tally.platforms)
    return {
        "release_id": release_id,
        "created_at": created_at,
        "tool": {"name": "crawl_assets", "version": tool_version, "normalizer_version": version},
        "query": query,
        "counts": {
            "records": sum(tally.platforms.values()),
            "ids_only": sum(tally.ids_only.values()),
            "deleted": tally.deleted,
            "edges": sum(edges.values()),
            "per_platform": dict(sorted(tally.platforms.items())),
            "per_language": dict(sorted(tally.langs.items())),
            "per_month": dict(sorted(tally.months.items())),
            "edges_per_type": dict(sorted(edges.items())),
        },
        "sources": {key: {**facts, "records": tally.sources[key], "created_from": tally.span[key][0],
                          "created_to": tally.span[key][1]} for key, facts in sorted(sources.items())},
        "enrichers": enrichers,
        "erasure": {"erasures_before": erasures_before, "records_left_out_as_erased": excluded_erased},
        "terms": {p: {"ids_only": p in tally.ids_only, "note": terms_of(p).note} for p in platforms},
    }
