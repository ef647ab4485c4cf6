"""Discovery: the chats (or other sources) a tenant's records name, as candidates a person may approve into the
registry (``crawl-assets discover``). Nothing is collected from a candidate: it is a row in a file.

Computed from one tenant's normalized records only (the latest observation of each key, deletions left out),
with the platform's ``DiscoverySpec.references``; each candidate carries how often each way named it, when it
was first and last named (the naming records' times), the sources whose records named it and a few of those
records' keys. Candidates that are the tenant's own chats (a source's records' ``self``) or are registered are
marked ``registered``. The whole table is rewritten each time (``discovery/{tenant}/{platform}/candidates.json``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import orjson

from crawl_assets.lake import Lake
from crawl_assets.lake.layout import discovery_file
from crawl_assets.pipeline.reader import latest_batches, sources_with_records

References = Callable[[dict[str, Any]], Iterable[tuple[str, str, str]]]
COLUMNS = ["key", "created_at", "urls", "mentions", "metadata"]
WAYS = ("forward", "link", "mention")
EXAMPLES = 3


@dataclass
class _Seen:
    label: str
    ways: Counter[str] = field(default_factory=Counter)
    first: datetime | None = None
    last: datetime | None = None
    sources: set[str] = field(default_factory=set)
    examples: list[str] = field(default_factory=list)

    def add(self, way: str, at: datetime | None, source: str, key: str, label: str) -> None:
        self.ways[way] += 1
        if at is not None:
            self.first = at if self.first is None or at < self.first else self.first
            self.last = at if self.last is None or at > self.last else self.last
        self.sources.add(source)
        if len(self.examples) < EXAMPLES and key not in self.examples:
            self.examples.append(key)
        if label.lower() == self.label.lower() or self.label.startswith("id:"):
            self.label = label  # the spelling seen last (a forward's name beats a bare id)


def compute(lake: Lake, tenant: str, platform: str, references: References) -> tuple[list[dict[str, Any]], set[str]]:
    """(candidates, the tenant's own chats) from ``tenant``'s records of ``platform``, most named first."""
    seen: dict[str, _Seen] = {}
    own: set[str] = set()
    for _, source in sources_with_records(lake, tenant, platform):
        for batch in latest_batches(lake, tenant, platform, source, columns=COLUMNS, deleted=False):
            for row in batch.to_pylist():
                at = row.get("created_at")
                for candidate, label, way in references(row):
                    if way == "self":
                        own.add(candidate)
                        continue
                    entry = seen.get(candidate)
                    if entry is None:
                        entry = seen[candidate] = _Seen(label)
                    entry.add(way, at, source, row["key"], label)
    rows = [{
        "candidate": candidate, "label": s.label, "count": sum(s.ways.values()),
        **{way: s.ways.get(way, 0) for way in WAYS},
        "first_seen": s.first.isoformat() if s.first else None, "last_seen": s.last.isoformat() if s.last else None,
        "sources": sorted(s.sources), "examples": s.examples,
    } for candidate, s in seen.items() if candidate not in own]
    rows.sort(key=lambda r: (-r["count"], r["candidate"]))
    return rows, own


def refresh(lake: Lake, tenant: str, platform: str, references: References, now: datetime | None = None) -> dict[str, Any]:
    """Compute ``tenant``'s candidates of ``platform`` and store them (the whole table, replaced)."""
    rows, own = compute(lake, tenant, platform, references)
    table = {"tenant": tenant, "platform": platform, "computed_at": (now or datetime.now(timezone.utc)).isoformat(),
             "own": sorted(own), "candidates": rows}
    lake.write_bytes(discovery_file(tenant, platform), orjson.dumps(table))
    return table


def stored(lake: Lake, tenant: str, platform: str) -> dict[str, Any] | None:
    """The table ``refresh`` stored last for ``tenant`` and ``platform``, or None."""
    data = lake.read_bytes(discovery_file(tenant, platform))
    return orjson.loads(data) if data else None


def with_registry(table: dict[str, Any], registered: set[str]) -> list[dict[str, Any]]:
    """The table's candidates, each marked ``registered`` when a registry entry of the tenant is that chat."""
    return [{**row, "registered": row["candidate"] in registered} for row in table["candidates"]]
