"""The copies of a release's records for people: ``records.csv`` and ``records.xlsx``, made from
``records.parquet`` a record batch at a time with the cells of the record exports (``crawl_assets.index``:
no cell a spreadsheet runs as a formula, Persian text marked right to left where it starts otherwise, lists and
objects as JSON, times in ISO 8601 UTC as in ``records.jsonl``). The CSV starts with a byte order mark (Excel reads UTF-8 without one as
the system's code page). A sheet holds at most 1,048,575 records: a larger release's workbook holds the first
ones and its ``export`` sheet says so; the CSV holds them all. Both are derived: the release id does not
depend on them, and the same records give the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from crawl_assets.core.private import open_new
from crawl_assets.query import csv_cells, xlsx
from crawl_assets.query.export_formats import FREE_TEXT, csv_cell, xlsx_cell

BATCH = 4096
SHEET_NOTE = "the records of release {release} (see datasheet.json){cut}"


def _rows(parquet: Path, fields: list[str]) -> Iterator[list[tuple[Any, ...]]]:
    """The records as rows of plain values, a record batch at a time, converted column by column in Arrow as
    ``records.jsonl`` is (``files.json_lines``): instants as ISO 8601 UTC text, the JSON columns' stored text as
    it is, lists as JSON text."""
    source = pq.ParquetFile(parquet)
    for batch in source.iter_batches(batch_size=BATCH, columns=fields):
        columns = []
        for name in fields:
            column = batch.column(name)
            if pa.types.is_timestamp(column.type):  # as naive UTC: a zoned column is formatted slowly
                columns.append(pc.strftime(column.cast(pa.timestamp("us")), format="%Y-%m-%dT%H:%M:%SZ").to_pylist())
            elif pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
                columns.append([None if v is None else orjson.dumps(v).decode() for v in column.to_pylist()])
            else:
                columns.append(column.to_pylist())
        yield list(zip(*columns))


def write_csv(folder: Path, fields: list[str]) -> None:
    with open_new(folder / "records.csv", exclusive=True) as out:
        buf = io.StringIO()
        writer = csv_cells.writer(buf)
        buf.write("\ufeff")
        writer.writerow(fields)
        for page in _rows(folder / "records.parquet", fields):
            writer.writerows([csv_cell(v) for v in row] for row in page)
            out.write(buf.getvalue().encode("utf-8"))
            buf.seek(0)
            buf.truncate()
        out.write(buf.getvalue().encode("utf-8"))


def write_xlsx(folder: Path, fields: list[str], release_id: str, records: int) -> None:
    room = xlsx.MAX_ROWS - 1
    free = [f in FREE_TEXT for f in fields]

    def pages() -> Iterator[list[list[Any]]]:
        left = room
        for page in _rows(folder / "records.parquet", fields):
            if left <= 0:
                return
            page = page[:left]
            left -= len(page)
            yield [[xlsx_cell(v, t) for v, t in zip(row, free)] for row in page]

    cut = f"; the first {room} of {records} records (all are in records.csv)" if records > room else ""
    with open_new(folder / "records.xlsx", exclusive=True) as out:
        for chunk in xlsx.workbook(fields, pages(), SHEET_NOTE.format(release=release_id, cut=cut)):
            out.write(chunk)


def write_sheets(folder: Path, fields: list[str], release_id: str, records: int) -> None:
    """``records.csv`` and ``records.xlsx`` beside ``records.parquet`` in ``folder``."""
    write_csv(folder, fields)
    write_xlsx(folder, fields, release_id, records)
