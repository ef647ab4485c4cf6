"""Records and edges as Arrow tables with one fixed schema, so every Parquet part reads as one dataset.

Nested free-form fields (metadata, metrics, media, provenance, enrichment) are stored as JSON text:
their keys differ between platforms and Parquet needs one schema per column.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import orjson
import pyarrow as pa

JSON_COLUMNS = ("media", "metrics", "metadata", "provenance", "enrichment")
LIST_COLUMNS = ("hashtags", "mentions", "urls")
TIME_COLUMNS = ("created_at", "edited_at", "deleted_at")
STRING_COLUMNS = (
    "key", "platform", "tenant", "source", "kind", "native_id", "author_id", "author_handle",
    "text", "text_clean", "lang", "reply_to", "quote_of", "repost_of", "conversation_id",
)
_TS = pa.timestamp("us", tz="UTC")

RECORDS_SCHEMA = pa.schema(
    [pa.field(c, pa.string()) for c in STRING_COLUMNS]
    + [pa.field(c, _TS) for c in TIME_COLUMNS]
    + [pa.field("deleted", pa.bool_())]
    + [pa.field(c, pa.list_(pa.string())) for c in LIST_COLUMNS]
    + [pa.field(c, pa.string()) for c in JSON_COLUMNS]
)

# the records columns a part keeps min/max statistics for: not the free text, URLs or JSON columns, whose values
# readers never prune by and whose min/max (up to 4 KiB each, per row group) made the footer, held in memory
# while a part is written or read, grow with the part
RECORDS_STATISTICS = [*(c for c in STRING_COLUMNS if c not in ("text", "text_clean")), *TIME_COLUMNS, "deleted",
                      "hashtags.list.element", "mentions.list.element"]

EDGES_SCHEMA = pa.schema(
    [
        pa.field("type", pa.string()),
        pa.field("src", pa.string()),
        pa.field("dst", pa.string()),
        pa.field("created_at", _TS),
        pa.field("platform", pa.string()),
        pa.field("tenant", pa.string()),
    ]
)


def _ts(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def records_to_arrow(records: Iterable[dict[str, Any]]) -> pa.Table:
    """Records as dicts (``Record.model_dump(mode="json")``) → a table with ``RECORDS_SCHEMA``."""
    cols: dict[str, list[Any]] = {f.name: [] for f in RECORDS_SCHEMA}
    for rec in records:
        for c in STRING_COLUMNS:
            v = rec.get(c)
            cols[c].append(None if v is None else str(v))
        for c in TIME_COLUMNS:
            cols[c].append(_ts(rec.get(c)))
        cols["deleted"].append(bool(rec.get("deleted", False)))
        for c in LIST_COLUMNS:
            cols[c].append(list(rec.get(c) or []))
        for c in JSON_COLUMNS:
            v = rec.get(c)
            cols[c].append(None if v is None else orjson.dumps(v, option=orjson.OPT_SORT_KEYS).decode())
    return pa.table(cols, schema=RECORDS_SCHEMA)


def arrow_to_records(table: pa.Table) -> Iterator[dict[str, Any]]:
    """The inverse of ``records_to_arrow``: JSON-ready dicts (ISO 8601 UTC instants)."""
    for row in table.to_pylist():
        for c in TIME_COLUMNS:
            if row.get(c) is not None:
                row[c] = row[c].isoformat().replace("+00:00", "Z")
        for c in JSON_COLUMNS:
            if row.get(c) is not None:
                row[c] = orjson.loads(row[c])
        yield row
