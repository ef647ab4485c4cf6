"""The copies of a release's records for people: ``records.csv`` and ``records.xlsx``, made from
``records.parquet`` a record batch at a time with the cells of the record exports (``crawl_assets.index``:
no cell a spreadsheet runs as a formula, Persian text marked right to left where it starts otherwise, lists and
objects as JSON, times in ISO 8601 UTC). The CSV starts with a byte order mark (Excel reads UTF-8 without one as
the system's code page). A sheet holds at most 1,048,575 records: a larger release's workbook holds the first
ones and its ``export`` sheet says so; the CSV holds them all. Both are derived: the release id does not
depend on them, and the same records give the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from crawl_assets.core.private import open_new
from crawl_assets.index import csv_cells, xlsx
from crawl_assets.index.export_formats import FREE_TEXT, csv_cell, xlsx_cell
from crawl_assets.lake.tables import arrow_to_records

BATCH = 4096
SHEET_NOTE = "the records of release {release} (see datasheet.json){cut}"


def _documents(parquet: Path) -> Iterator[list[dict[str, Any]]]:
    source = pq.ParquetFile(parquet)
    for batch in source.iter_batches(batch_size=BATCH):
        yield list(arrow_to_records(pa.Table.from_batches([batch])))


def write_csv(folder: Path, fields: list[str]) -> None:
    with open_new(folder / "records.csv", exclusive=True) as out:
        buf = io.StringIO()
        writer = csv_cells.writer(buf)
        buf.write("\ufeff")
        writer.writerow(fields)
        for page in _documents(folder / "records.parquet"):
            writer.writerows([csv_cell(doc.get(f)) for f in fields] for doc in page)
            out.write(buf.getvalue().encode("utf-8"))
            buf.seek(0)
            buf.truncate()
        out.write(buf.getvalue().encode("utf-8"))


def write_xlsx(folder: Path, fields: list[str], release_id: str, records: int) -> None:
    room = xlsx.MAX_ROWS - 1
    free = [f in FREE_TEXT for f in fields]

    def pages() -> Iterator[list[list[Any]]]:
        left = room
        for page in _documents(folder / "records.parquet"):
            if left <= 0:
                return
            page = page[:left]
            left -= len(page)
            yield [[xlsx_cell(doc.get(f), t) for f, t in zip(fields, free)] for doc in page]

    cut = f"; the first {room} of {records} records (all are in records.csv)" if records > room else ""
    with open_new(folder / "records.xlsx", exclusive=True) as out:
        for chunk in xlsx.workbook(fields, pages(), SHEET_NOTE.format(release=release_id, cut=cut)):
            out.write(chunk)


def write_sheets(folder: Path, fields: list[str], release_id: str, records: int) -> None:
    """``records.csv`` and ``records.xlsx`` beside ``records.parquet`` in ``folder``."""
    write_csv(folder, fields)
    write_xlsx(folder, fields, release_id, records)
