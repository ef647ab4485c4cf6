"""Physical generations of an index: what ``crawl-assets es reindex`` leaves behind.

Writers always address the *logical* index name that ``naming`` derives (``crawl-records-acme-2026.01``).
Until its first reindex that name is the concrete index; a reindex turns it into an alias whose write
index is a generation ``{logical}.g{n}``. Everything that lists indices (setup, retention, stats) reads
physical names back to their logical one here, so names stay derived, never stored.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from crawl_assets.index.naming import parse_index

_GENERATION = re.compile(r"^(?P<logical>.+)\.g(?P<n>[1-9][0-9]{0,5})$")


def logical_name(physical: str) -> str:
    """The logical index a physical index belongs to (itself when it is not a generation)."""
    found = _GENERATION.match(physical)
    if found and parse_index(found["logical"]):
        return found["logical"]
    return physical


def generation(physical: str) -> int:
    """0 for the original concrete index, n for ``{logical}.g{n}``."""
    found = _GENERATION.match(physical)
    return int(found["n"]) if found and parse_index(found["logical"]) else 0


def physical_name(logical: str, n: int) -> str:
    return f"{logical}.g{n}"


def parse_physical(name: str) -> tuple[str, str, str | None] | None:
    """``naming.parse_index`` of a physical index's logical name: (family, tenant, month) or None."""
    return parse_index(logical_name(name))


def by_logical(names: Iterable[str]) -> dict[str, list[str]]:
    """Physical names grouped by logical name, oldest generation first. A group of two or more is a
    reindex that has not finished (the newest is the write index, the older ones are still read)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for name in names:
        groups[logical_name(name)].append(name)
    return {k: sorted(v, key=generation) for k, v in groups.items()}
