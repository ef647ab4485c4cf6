"""Erase from the index dead-letter files: a refused document is a full copy of a record or an edge, so
an erasure that left it there would keep the data (and a later ``es replay`` would index it again).

Pending and replayed files of the tenant are both read; a file that holds an erased document is rewritten
without those lines (atomically: a new file, then a rename over the old one), or removed when nothing is
left. Lines that cannot be parsed are kept: they are reported by ``es replay`` and an erasure must not
destroy what it cannot read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from crawl_assets.erasure.authors import Author
from crawl_assets.lake import Lake

FAMILIES = ("records", "edges")


@dataclass(frozen=True)
class ErasedSet:
    """What an erasure removed: record keys and edge document ids, and who or which source it was for."""

    keys: frozenset[str]
    edge_ids: frozenset[str]
    author: Author | None = None
    source: str | None = None

    def covers(self, family: str, doc_id: str | None, doc: Mapping[str, Any]) -> bool:
        """Pure: whether a dead-lettered document belongs to the erased data."""
        if family == "edges":
            return doc_id in self.edge_ids or doc.get("src") in self.keys or doc.get("dst") in self.keys
        if doc_id in self.keys or doc.get("key") in self.keys:
            return True
        if self.source is not None and doc.get("source") == self.source:
            return True
        return self.author is not None and self.author.owns(doc)


def keep_lines(data: bytes, family: str, covers: Callable[[str, str | None, Mapping[str, Any]], bool]) -> tuple[bytes, int]:
    """Pure: the file's bytes without the lines of erased documents, and how many lines were dropped."""
    kept: list[bytes] = []
    dropped = 0
    for line in data.splitlines(keepends=True):
        try:
            letter = orjson.loads(line) if line.strip() else None
        except orjson.JSONDecodeError:
            letter = None
        doc = letter.get("doc") if isinstance(letter, dict) else None
        if isinstance(doc, dict) and covers(family, letter.get("id"), doc):
            dropped += 1
            continue
        kept.append(line)
    return b"".join(kept), dropped


def _files(lake: Lake, tenant: str) -> Iterable[tuple[str, str]]:
    for replayed in (False, True):
        for family in FAMILIES:
            for path in sorted(lake.deadletter_files(tenant, family, replayed=replayed)):
                yield family, path


def erase_deadletters(lake: Lake, tenant: str, erased: ErasedSet) -> int:
    """Remove the erased documents from the tenant's dead-letter files; the number of letters removed."""
    lake.remove_interrupted_rewrites(tenant)
    removed = 0
    for family, path in _files(lake, tenant):
        data = lake.read_bytes(path) or b""
        kept, dropped = keep_lines(data, family, erased.covers)
        if not dropped:
            continue
        removed += dropped
        lake.replace_file(path, kept)  # removed when nothing is left
    return removed
