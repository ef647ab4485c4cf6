"""Helpers shared by the REST source tests (Discourse, Play, Intercom, Hacker News): the ``store``
callback on a real lake, normalizing what a sync stored, running a raw asset in Dagster, golden files."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import orjson

from crawl_assets.lake import Lake, RawBatch
from crawl_assets.lake.layout import new_batch_id
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.registry import SourceEntry
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.schema.record import Record, Rejection


@dataclass
class LakeStore:
    """``store(lines, state, info)`` as the collector does it: a raw batch in a real lake, then the state."""

    lake: Lake
    entry: SourceEntry
    fmt: str
    batches: list[RawBatch] = field(default_factory=list)
    states: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, lines: list[bytes], state: dict[str, Any], info: dict[str, Any]) -> None:
        if lines:
            self.batches.append(self.lake.write_raw_batch(
                tenant=self.entry.tenant, platform=self.entry.platform, source=self.entry.key,
                batch_id=new_batch_id("test", len(self.batches)), fmt=self.fmt, method="api", run_id="test",
                lines=lines, extra=info))
        self.states.append(state)

    @property
    def state(self) -> dict[str, Any]:
        return self.states[-1] if self.states else {}

    def lines(self) -> list[bytes]:
        out: list[bytes] = []
        for batch in self.lake.raw_batches(self.entry.tenant, self.entry.platform, self.entry.key):
            with self.lake.open_raw(batch) as fh:
                out += [line.rstrip(b"\n") for line in fh if line.strip()]
        return out


def normalize_batches(lake: Lake, entry: SourceEntry, normalizer: Callable[..., Iterator[Any]]
                      ) -> tuple[list[Record], list[Rejection]]:
    """Every stored batch of ``entry`` through ``normalizer``, batch by batch as ``normalized_records`` does."""
    records: list[Record] = []
    rejections: list[Rejection] = []
    for batch in lake.raw_batches(entry.tenant, entry.platform, entry.key):
        ctx = NormalizeContext(tenant=entry.tenant, source=entry.key, method="api", raw_pointer=batch.path)
        with lake.open_raw(batch) as fh:
            for item in normalizer(fh, name=batch.path, context=ctx):
                (rejections if isinstance(item, Rejection) else records).append(item)
    return records, rejections


def errors(rejections: list[Rejection]) -> list[Rejection]:
    return [r for r in rejections if r.error]


def run_raw_asset(asset: dg.AssetsDefinition, *, tmp_path: Path, registry_yaml: str, partition: str,
                  resources: dict[str, Any], instance: dg.DagsterInstance, raise_on_error: bool = True
                  ) -> dg.ExecuteInJobResult:
    """Materialize one partition of a raw asset with a real lake and registry under ``tmp_path``."""
    registry = tmp_path / "sources.yaml"
    if not registry.exists():
        registry.write_text(registry_yaml)
    platform = partition.split(".")[1]
    instance.add_dynamic_partitions(f"{platform}_sources", [partition])
    return dg.materialize(
        [asset], partition_key=partition, instance=instance, raise_on_error=raise_on_error,
        resources={"lake": LakeResource(root=str(tmp_path / "lake")), "registry": RegistryResource(path=str(registry)),
                   **resources})


def materialization_metadata(result: dg.ExecuteInJobResult) -> dict[str, Any]:
    event = result.get_asset_materialization_events()[-1]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def check_golden(records: list[Any], path: Path) -> None:
    """Compare records (as JSON lines, ``collected_at`` included: the inputs fix it) with a golden file;
    ``UPDATE_GOLDEN=1`` rewrites the file instead (review the diff before committing)."""
    got = [orjson.loads(r.model_dump_json()) if isinstance(r, (Record, Rejection)) else r for r in records]
    text = b"".join(orjson.dumps(g, option=orjson.OPT_SORT_KEYS) + b"\n" for g in got)
    if os.environ.get("UPDATE_GOLDEN") or not path.exists():
        path.write_bytes(text)
    expected = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    assert got == expected


def golden_stream(path: Path) -> io.BytesIO:
    return io.BytesIO(path.read_bytes())


def assert_golden(fmt: str, folder: Path, input_name: str, expected_name: str) -> list[Any]:
    """Normalize a golden input through ``normalize_stream`` (the contract path) and compare records and
    rejections with the golden output; the fast document path must serialize to the same records."""
    from crawl_assets.normalize import normalize_documents, normalize_stream

    ctx = NormalizeContext(tenant="acme", source=f"acme.{fmt}.golden", method="api", run_id="golden")
    items = list(normalize_stream(fmt, golden_stream(folder / input_name), name=input_name, context=ctx))
    check_golden(items, folder / expected_name)
    docs = list(normalize_documents(fmt, golden_stream(folder / input_name), name=input_name, context=ctx))
    fast = [orjson.loads(orjson.dumps(d, option=orjson.OPT_UTC_Z)) for d in docs if not isinstance(d, Rejection)]
    slow = [orjson.loads(r.model_dump_json()) for r in items if isinstance(r, Record)]
    assert fast == slow
    for record in slow:
        Record.model_validate(record)  # what the documents path emits passes the contract too
    return items
