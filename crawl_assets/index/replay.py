"""Replay dead-letter files through the sink (after fixing a mapping, a document, or a cluster problem).

Each document is re-sent with the external version it was first sent with. A file whose letters were all
accounted for moves to ``deadletter/es-replayed/``; letters that fail again
land in a new dead-letter file (with the new reason), so nothing is lost and nothing is replayed twice.
A file with unreadable lines stays pending and is reported with file and line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from elasticsearch import Elasticsearch

from crawl_assets.index.outcomes import BadLine, mark_replayed, pending_files, read_file
from crawl_assets.index.sink import BulkSink, SinkStats


@dataclass
class ReplayedFile:
    path: str
    family: str
    tenant: str
    stats: SinkStats
    moved_to: str | None
    bad_lines: list[BadLine] = field(default_factory=list)


@dataclass
class ReplayReport:
    files: list[ReplayedFile] = field(default_factory=list)

    @property
    def replayed(self) -> int:
        return sum(f.stats.docs for f in self.files)

    @property
    def still_failed(self) -> int:
        return sum(f.stats.failed for f in self.files)

    @property
    def bad_lines(self) -> list[BadLine]:
        return [b for f in self.files for b in f.bad_lines]


def replay_deadletters(client: Elasticsearch, root: str, *, family: str | None = None, tenant: str | None = None,
                       paths: Iterable[str] | None = None, run_id: str | None = None,
                       **tuning: Any) -> ReplayReport:
    """Re-index the documents of pending dead-letter files under ``root`` (or of the given ``paths``)."""
    report = ReplayReport()
    for path in list(paths) if paths is not None else pending_files(root, family, tenant):
        try:
            parsed = read_file(root, path)
        except ValueError as exc:  # a path outside the lake
            report.files.append(ReplayedFile(path, "", "", SinkStats(), None, [BadLine(path, 0, str(exc))]))
            continue
        if not parsed.family or not parsed.tenant:
            report.files.append(ReplayedFile(path, "", "", SinkStats(), None,
                                             [BadLine(path, 0, "not under deadletter/es/{family}/{tenant}/")]))
            continue
        # each with the version it was sent with: an edge document does not carry its record's times
        with BulkSink(client, family=parsed.family, tenant=parsed.tenant, deadletter_root=root,  # type: ignore[arg-type]
                      run_id=run_id or "replay", **tuning) as sink:
            for letter in parsed.letters:
                sink.add(letter.doc, letter.version)
        stats = sink.stats
        moved = None
        if not parsed.bad and stats.unaccounted == 0:
            moved = mark_replayed(root, path)
        report.files.append(ReplayedFile(path, parsed.family, parsed.tenant, stats, moved, parsed.bad))
    return report
