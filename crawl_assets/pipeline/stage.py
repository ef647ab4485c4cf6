"""The contract every stage of a source's chain keeps, without Dagster: a stage is ``run(platform, ctx)``
returning a ``StageReport`` (its metadata and check outcomes as data), or ``None`` when it had nothing to
materialize (it logged why). The CLI, a test or Dagster runs the same stage; ``run_stage`` in
``orchestration/assets/chain.py`` turns a report into a ``MaterializeResult`` with its checks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from crawl_assets.lake import Lake
from crawl_assets.sdk.sync import Log


@dataclass(frozen=True)
class MetadataPath:
    """A metadata value that is a path or URL (shown as a link where the runner can)."""

    path: str


@dataclass(frozen=True)
class Check:
    """One check's outcome (failing at error severity)."""

    name: str
    passed: bool
    metadata: dict[str, Any] = field(default_factory=dict)
    description: str | None = None


@dataclass
class StageReport:
    """What a stage did: ``metadata`` for its materialization, ``checks`` evaluated, ``source_notes`` to show on
    the source's raw partition (where people look first), and stage-specific values its runner may show."""

    metadata: dict[str, Any]
    checks: list[Check] = field(default_factory=list)
    source_notes: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StageContext:
    """One stage of one source: the lake, the run it belongs to, a log, the cluster (an object with ``hosts``
    and ``get_client()``, or None), and ``previous(name)``: a metadata value of this stage's last report for
    the source (None where the runner keeps none)."""

    lake: Lake
    source: str
    run_id: str
    log: Log
    cluster: Any = None
    previous: Callable[[str], Any] = lambda name: None
