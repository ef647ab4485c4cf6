"""Encoders of an ``exports.ExportPlan``: JSON lines, CSV, Parquet and XLSX, each a generator of byte chunks
(``encode``: the plan's format). The plan does not know its encoders: this module reads the plan, not back."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import orjson

from crawl_assets.query import arrow_columns, csv_cells, xlsx
from crawl_assets.query import exports
from crawl_assets.query.exports import LISTS, OBJECTS, TIMES, ExportPlan

HEADER_KEY = "crawl_assets.export"
FREE_TEXT = ("text", "text_clean")
REPEATING = ("platform", "tenant", "source", "kind", "lang", "author_id", "author_handle", "hashtags", "mentions",
             "deleted")


def jsonl(plan: ExportPlan) -> Iterator[bytes]:
    yield orjson.dumps({"_export": plan.header}) + b"\n"
    fields = plan.fields
    for page in plan.pages():
        yield b"".join(orjson.dumps({f: doc.get(f) for f in fields}) + b"\n" for doc in page)


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell: lists and objects as JSON, booleans as words, text never a formula."""
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return orjson.dumps(value).decode()  # starts with [ or {: never a formula
    if isinstance(value, bool):
        return "true" if value else "false"
    return csv_cells.cell(value)  # text a spreadsheet would run as a formula gets a leading quote


def csv_rows(plan: ExportPlan) -> Iterator[bytes]:
    """A UTF-8 byte order mark (unless ``plan.bom`` is off: Excel reads UTF-8 without one as the system's
    code page, Persian and Arabic as garbage), the header comment, the field names, then one row per record:
    cells safe to open in a spreadsheet (``csv_cells``: no formula, every text cell quoted)."""
    buf = io.StringIO()
    if plan.bom:
        buf.write("\ufeff")
    writer = csv_cells.writer(buf)
    buf.write(csv_cells.comment_line("# crawl_assets export ", plan.header))
    writer.writerow(plan.fields)
    yield buf.getvalue().encode("utf-8")
    fields = plan.fields
    for page in plan.pages():
        buf.seek(0)
        buf.truncate()
        writer.writerows([csv_cell(doc.get(f)) for f in fields] for doc in page)
        yield buf.getvalue().encode("utf-8")


class _Sink(io.RawIOBase):
    """A write-only file that keeps what was written until ``drain``: Parquet bytes leave as they are made."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.pos = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.parts.append(chunk)
        self.pos += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self.pos

    def drain(self) -> bytes:
        out, self.parts = b"".join(self.parts), []
        return out


def parquet(plan: ExportPlan) -> Iterator[bytes]:
    """Row groups of at most ``ROW_GROUP`` rows, each encoded and sent as soon as it is full, so what the
    process holds is bounded by one row group (as Arrow columns) and the pages fetched ahead, whatever the
    export's size. Arrow memory comes from the system allocator (``pa.system_memory_pool``): Arrow's default
    pool (mimalloc) keeps the pages it freed. Columns are built from their buffers (``arrow_columns``), not
    ``pa.array``, whose first call keeps Arrow's conversion machinery in the process for good (docs/API.md)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pool = pa.system_memory_pool()

    def arrow_type(field: str) -> pa.DataType:
        if field in TIMES:
            return pa.timestamp("ms", tz="UTC")
        if field == "deleted":
            return pa.bool_()
        if field in LISTS:
            return pa.list_(pa.string())
        return pa.string()

    schema = pa.schema([pa.field(f, arrow_type(f)) for f in plan.fields],
                       metadata={HEADER_KEY: orjson.dumps(plan.header)})
    sink = _Sink()
    # The footer (every row group's metadata) stays in memory until the file is closed: no min/max statistics
    # for free text, which readers cannot prune by anyway (with them the footer grew ~2 MiB per 100k records).
    statistics = [f"{f}.list.element" if f in LISTS else f for f in plan.fields if f not in FREE_TEXT]
    # Dictionary encoding only where values repeat (a dictionary builder per column holds a hash table of every
    # distinct value of the row group: for unique text and keys that is memory and time for no gain).
    dictionary = [f"{f}.list.element" if f in LISTS else f for f in plan.fields if f in REPEATING]
    writer = pq.ParquetWriter(sink, schema, compression="zstd", memory_pool=pool, write_statistics=statistics,
                              use_dictionary=dictionary)

    def batch(page: list[dict[str, Any]]) -> pa.RecordBatch:
        """One page as Arrow columns at once: a row group waits as compact Arrow data, not Python objects."""
        columns = []
        for f in plan.fields:
            values = [doc.get(f) for doc in page]
            if f in TIMES:
                columns.append(arrow_columns.utc_millis(values))
            elif f == "deleted":
                columns.append(arrow_columns.booleans(values))
            elif f in LISTS:
                columns.append(arrow_columns.string_lists(values))
            elif f in OBJECTS:
                columns.append(arrow_columns.strings([None if v is None else orjson.dumps(v).decode() for v in values]))
            else:
                columns.append(arrow_columns.strings([None if v is None else str(v) for v in values]))
        return pa.RecordBatch.from_arrays(columns, schema=schema)

    def flush(batches: list[pa.RecordBatch]) -> bytes:
        writer.write_table(pa.Table.from_batches(batches, schema=schema), row_group_size=exports.ROW_GROUP)
        return sink.drain()

    pending: list[pa.RecordBatch] = []
    rows = 0
    try:
        for page in plan.pages():
            pending.append(batch(page))
            rows += len(page)
            if rows >= exports.ROW_GROUP:  # write_table cuts it into row groups of ROW_GROUP rows at most
                yield flush(pending)
                pending, rows = [], 0
        if pending:
            yield flush(pending)
    finally:
        writer.close()
    yield sink.drain()


def xlsx_cell(value: Any, free_text: bool) -> Any:
    """A value as an XLSX cell (``free_text``: a right-to-left mark where Persian or Arabic starts otherwise)."""
    if isinstance(value, (list, dict)):
        return orjson.dumps(value).decode()
    if free_text and isinstance(value, str):
        value = xlsx.bidi_safe(value)
    return csv_cells.cell(value)  # the CSV writer's rule, so a cell copied out of the sheet stays inert too


def xlsx_rows(plan: ExportPlan) -> Iterator[bytes]:
    """One sheet of records (numbers as numbers, text as text; ``text`` and ``text_clean`` with a right-to-left
    mark where a Persian or Arabic text starts otherwise: ``xlsx.bidi_safe``), the header object as JSON in
    the ``export`` sheet."""
    fields = plan.fields
    free = [f in FREE_TEXT for f in fields]
    rows = ([[xlsx_cell(doc.get(f), t) for f, t in zip(fields, free)] for doc in page] for page in plan.pages())
    return xlsx.workbook(list(fields), rows, orjson.dumps(plan.header).decode())


WRITERS = {"jsonl": jsonl, "csv": csv_rows, "parquet": parquet, "xlsx": xlsx_rows}


def encode(plan: ExportPlan) -> Iterator[bytes]:
    """The plan's records as byte chunks in its format."""
    return WRITERS[plan.fmt](plan)
