"""Hydrating a release: its ids-only entries re-fetched through the platforms' ``id_list`` sources, and a report
of what came back and why the rest is gone.

The package is verified first (untrusted input); its ``ids.jsonl`` is the id list each platform's source reads
(``crawl_assets.sdk.id_lists``), registered in the tenant as ``hydrate-RELEASE_ID``. The report reads the
lake's latest record of each listed key in that source: ``found`` (a record), ``gone`` with the platform's
reason (``metadata.unavailable``, e.g. ``not_found``, ``not_authorized``; X's words in ``detail``) or
``pending`` (not asked yet, or the platform has no ``id_list`` kind: ``reason`` says which). It is kept in the
lake (``releases/TENANT/hydrations/RELEASE_ID.jsonl``, a line per id) so nothing missing goes unexplained.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from crawl_assets import names
from crawl_assets.core import catalog
from crawl_assets.core.files import FileRefused, open_regular
from crawl_assets.lake import Lake
from crawl_assets.lake.layout import hydration_report as report_path
from crawl_assets.pipeline.reader import latest_batches
from crawl_assets.release.verify import PackageInvalid, verify_package
from crawl_assets.sdk.id_lists import ID_LIST

IDS_FILE = "ids.jsonl"


@dataclass
class HydrationPlan:
    """What a package asks of a tenant: its release id and, per platform, how many ids."""

    release_id: str
    folder: Path
    ids: pa.Table  # key, platform, native_id (the package's order)
    per_platform: dict[str, int] = field(default_factory=dict)

    def hydratable(self) -> list[str]:
        specs = catalog.catalog().specs
        return [p for p in sorted(self.per_platform) if p in specs and ID_LIST in specs[p].kinds]

    def source_name(self) -> str:
        return f"hydrate-{self.release_id}"

    def entry(self, tenant: str, platform: str, identifier: str, credential: str | None) -> dict[str, Any]:
        """The registry entry of ``platform``'s hydration source (``identifier``: the id list under the import root)."""
        return {"name": self.source_name(), "tenant": tenant, "platform": platform, "kind": ID_LIST,
                "identifier": identifier, "credential": credential, "policy": {}, "options": {}}


def plan_hydration(folder: Path) -> HydrationPlan:
    """The package's ids, after it verified; ``PackageInvalid`` naming what does not match its manifest."""
    release_id, problems = verify_package(folder)
    if problems:
        raise PackageInvalid(f"{folder}: does not match its manifest ({'; '.join(problems[:5])}); not hydrated")
    if not names.is_slug(f"hydrate-{release_id}"):  # the manifest is someone else's: its id names a source here
        raise PackageInvalid(f"{folder}: release id {release_id[:80]!r} is not {names.SLUG_RULE} (after 'hydrate-')")
    try:  # someone else's file, verified against its manifest: read as a regular file, its columns as text
        with open_regular(folder / "ids.parquet") as fh:
            ids = pq.read_table(fh, columns=["key", "platform", "native_id"])
        if not all(pa.types.is_string(t) for t in ids.schema.types):
            raise PackageInvalid(f"{folder}/ids.parquet: its columns key, platform, native_id are not all text")
    except (OSError, FileRefused, pa.ArrowException) as exc:
        raise PackageInvalid(f"{folder}/ids.parquet: cannot be read ({exc}); not hydrated") from None
    counts = Counter(ids.column("platform").to_pylist())
    return HydrationPlan(release_id, folder, ids, dict(sorted(counts.items())))


def _outcomes(lake: Lake, tenant: str, platform: str, source: str, keys: set[str]) -> dict[str, dict[str, Any]]:
    """Key -> what the source's latest record says (found, or gone with the reason)."""
    out: dict[str, dict[str, Any]] = {}
    wanted = pa.array(sorted(keys), pa.string())
    for batch in latest_batches(lake, tenant, platform, source, ["key", "deleted", "metadata"]):
        batch = batch.filter(pc.is_in(batch.column("key"), value_set=wanted))
        for key, meta_text in zip(batch.column("key").to_pylist(), batch.column("metadata").to_pylist()):
            meta = orjson.loads(meta_text) if meta_text else {}
            why = meta.get("unavailable") if isinstance(meta, dict) else None
            if why:
                detail = (meta.get("x_error") or {}).get("detail") if isinstance(meta.get("x_error"), dict) else None
                out[key] = {"status": "gone", "reason": str(why), **({"detail": str(detail)} if detail else {})}
            else:
                out[key] = {"status": "found"}
    return out


def hydration_report(lake: Lake, tenant: str, plan: HydrationPlan) -> dict[str, Any]:
    """The summary (counts by status and reason), with the per-id lines written to the lake."""
    hydratable = set(plan.hydratable())
    outcomes: dict[str, dict[str, Any]] = {}
    keys_by_platform: dict[str, set[str]] = {}
    for key, platform in zip(plan.ids.column("key").to_pylist(), plan.ids.column("platform").to_pylist()):
        keys_by_platform.setdefault(platform, set()).add(key)
    for platform in sorted(hydratable):
        source = f"{tenant}.{platform}.{plan.source_name()}"
        outcomes.update(_outcomes(lake, tenant, platform, source, keys_by_platform[platform]))
    lines: list[bytes] = []
    tally: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for key, platform, native in zip(*(plan.ids.column(c).to_pylist() for c in ("key", "platform", "native_id"))):
        outcome = outcomes.get(key) or {"status": "pending", "reason": "not fetched yet" if platform in hydratable
                                        else f"{platform} has no {ID_LIST} source kind: not hydratable here"}
        tally[outcome["status"]] += 1
        if outcome["status"] != "found":
            reasons[f"{outcome['status']}:{outcome['reason']}"] += 1
        lines.append(orjson.dumps({"key": key, "platform": platform, "native_id": native, **outcome}) + b"\n")
    where = report_path(tenant, plan.release_id)
    lake.write_bytes(where, b"".join(lines))
    return {"release_id": plan.release_id, "tenant": tenant, "ids": plan.ids.num_rows,
            "found": tally["found"], "gone": tally["gone"], "pending": tally["pending"],
            "reasons": dict(sorted(reasons.items())), "report": where}
