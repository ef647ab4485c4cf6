"""Run the real ``normalized_records`` asset over raw batches written into a test lake, and read back what
it stored: parts (records as rows), quarantine (rejections) and the materialization's metadata."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import orjson

from crawl_assets.lake import Lake
from crawl_assets.lake.layout import source_dir
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.orchestration.resources import LakeResource


@dataclass
class RawInput:
    """One raw batch: a whole file's bytes (``stream``, as an export is ingested) or JSON lines."""

    batch_id: str
    fmt: str
    data: bytes | list[bytes]
    extra: dict[str, Any] = field(default_factory=dict)
    method: str = "export"


@dataclass
class Outcome:
    parts: dict[str, list[dict[str, Any]]]  # batch id -> stored rows
    quarantine: dict[str, list[dict[str, Any]]]  # batch id -> rejections
    metadata: dict[str, Any]


def write_batches(root: Path, tenant: str, platform: str, source: str, inputs: list[RawInput]) -> Lake:
    lake = Lake(str(root))
    for raw in inputs:
        kwargs: dict[str, Any] = {"lines": raw.data} if isinstance(raw.data, list) else {"stream": io.BytesIO(raw.data)}
        lake.write_raw_batch(tenant=tenant, platform=platform, source=source, batch_id=raw.batch_id, fmt=raw.fmt,
                             method=raw.method, run_id="r1", extra=raw.extra, **kwargs)
    return lake


def materialize_normalized(root: Path, platform: str, source: str) -> dict[str, Any]:
    """Materialize ``{platform}/normalized_records`` for one source partition; returns its metadata."""
    from crawl_assets.definitions import defs

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(f"{platform}_sources", [source])
        asset = defs.get_assets_def(dg.AssetKey([platform, "normalized_records"]))
        result = dg.materialize([asset], partition_key=source, instance=instance,
                                resources={"lake": LakeResource(root=str(root))})
        assert result.success
        event = result.get_asset_materialization_events()[0].materialization
        return {k: v.value for k, v in event.metadata.items()}


def normalize_in_lake(root: Path, platform: str, source: str, inputs: list[RawInput]) -> Outcome:
    """Write ``inputs`` as raw batches of ``source`` (``{tenant}.{platform}.{name}``), run the asset, read back."""
    tenant = source.split(".", 1)[0]
    lake = write_batches(root, tenant, platform, source, inputs)
    metadata = materialize_normalized(root, platform, source)
    parts = {batch_id: list(arrow_to_records(table))
             for batch_id, table in lake.read_parts("normalized_records", tenant, platform, source)}
    quarantine: dict[str, list[dict[str, Any]]] = {}
    folder = lake.path(source_dir("quarantine", tenant, platform, source))
    if lake.fs.exists(folder):
        for path in sorted(lake.fs.glob(f"{folder}/*.jsonl")):
            with lake.fs.open(path, "rb") as fh:
                quarantine[path.rsplit("/", 1)[1].removesuffix(".jsonl")] = [
                    orjson.loads(line) for line in fh.read().splitlines() if line.strip()]
    return Outcome(parts, quarantine, metadata)
