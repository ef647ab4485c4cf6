"""What a ``normalized_records`` materialization shows besides its counts: a small preview of records and
the per-language and per-kind counts of the records it wrote.

The Dagster instance (its event log) is not erased by ``crawl-assets erase``, so nothing that names a person
or a record goes into it: the preview shows when, in which language and of which kind the newest records
are; never a record's key (an erased post's id would stay in the event log for good), an author's handle or
id, nor text (read those in the lake or the index, where erasure reaches).

The preview is a Markdown table kept under 1,000 characters, the size the Dagster UI renders inline in
the materialization's metadata (a longer one hides behind a "Show Markdown" button).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.lake import Lake

PREVIEW_COLUMNS = ["created_at", "lang", "kind", "deleted"]  # no key, author or text: see above
PREVIEW_ROWS = 5
INLINE_LIMIT = 1000  # the UI renders shorter Markdown inline
PREVIEW_READ_ROWS = 65_536  # rows read at a time


def _cell(value: Any) -> str:
    text = " ".join(str(value if value is not None else "").split())
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("_", "\\_") or "-"


def preview_table(rows: Sequence[dict[str, Any]], limit: int = INLINE_LIMIT) -> str:
    """Markdown: time, lang, kind and state of up to ``PREVIEW_ROWS`` rows, newest first."""
    header = "| time | lang | kind | state |\n|---|---|---|---|\n"
    lines = []
    for row in sorted(rows, key=lambda r: str(r.get("created_at") or ""), reverse=True)[:PREVIEW_ROWS]:
        when = row.get("created_at")
        when = when.strftime("%Y-%m-%dT%H:%MZ") if hasattr(when, "strftime") else str(when or "")
        state = "deleted" if row.get("deleted") else "live"
        lines.append(f"| {_cell(when)} | {_cell(row.get('lang'))} | {_cell(row.get('kind'))} | {state} |\n")
    while lines and len(header) + sum(map(len, lines)) >= limit:
        lines.pop()
    return header + "".join(lines)


def newest_rows(part: pa.Table) -> pa.Table:
    """The rows ``preview_table`` shows, picked in Arrow (a 100k-row part is never turned into dicts): newest
    first, rows without a time last (as their empty text sorts), ties in part order (both sorts are stable)."""
    order = pc.sort_indices(part, sort_keys=[("created_at", "descending")])  # nulls at the end
    return part.take(order[:PREVIEW_ROWS])


def preview_metadata(lake: Lake, tenant: str, platform: str, source: str, table: str,
                     written: Sequence[str]) -> dict[str, Any]:
    """``records_by_lang`` and ``records_by_kind`` of the parts ``written`` this sync, and a preview of the
    newest part written (or, when nothing new was written, of the source's newest part)."""
    langs: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    # counted in Arrow a record batch at a time (a part of a million rows never becomes Python strings), each
    # value counted in order of first appearance, as a Counter fed row by row counts them
    for batch_id in written:
        part = lake.table_part(table, tenant, platform, source, batch_id)
        if not lake.exists(part):
            continue
        for rows in lake.iter_part_batches(part, columns=["lang", "kind"], batch_size=PREVIEW_READ_ROWS):
            for counts, column, default in ((langs, "lang", "unknown"), (kinds, "kind", None)):
                for entry in pc.value_counts(rows.column(column)).to_pylist():
                    counts[(entry["values"] or default) if default else entry["values"]] += entry["counts"]
    newest = max(written) if written else max(lake.part_ids(table, tenant, platform, source), default=None)
    rows: list[dict[str, Any]] = []
    if newest is not None and lake.exists(lake.table_part(table, tenant, platform, source, newest)):
        # the newest rows of each record batch, then of those: the same rows as of the whole part (stable sorts)
        part = lake.table_part(table, tenant, platform, source, newest)
        picked = [newest_rows(pa.Table.from_batches([batch]))
                  for batch in lake.iter_part_batches(part, columns=PREVIEW_COLUMNS, batch_size=PREVIEW_READ_ROWS)]
        rows = newest_rows(pa.concat_tables(picked)).to_pylist() if picked else []
    meta: dict[str, Any] = {
        "records_by_lang": dg.MetadataValue.json(dict(langs.most_common())),
        "records_by_kind": dg.MetadataValue.json(dict(kinds.most_common())),
    }
    if rows:
        intro = f"Newest records of batch `{newest}`" + ("" if newest in written else " (written by an earlier sync)")
        meta["preview"] = dg.MetadataValue.md(f"{intro}:\n\n" + preview_table(rows, INLINE_LIMIT - len(intro) - 3))
    return meta
