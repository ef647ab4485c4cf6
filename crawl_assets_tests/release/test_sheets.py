"""The copies of a release's records for people (``crawl_assets.release.sheets``): a CSV and an XLSX with the
records' fields and the export cells, listed in the manifest and the data package, rebuilt byte for byte."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import openpyxl

from crawl_assets import settings
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import RECORDS_SCHEMA
from crawl_assets.release import ReleaseQuery, create_release, verify_package
from crawl_assets_tests.release.lake_data import make_lake


def test_a_release_carries_csv_and_xlsx_copies_of_its_records():
    summary = create_release(make_lake(Lake(settings.lake_root())), ReleaseQuery("acme"), "sheets")
    folder = summary.path
    records = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    assert len(records) == 4 and verify_package(folder) == (summary.release_id, [])

    text = (folder / "records.csv").read_bytes().decode("utf-8")
    assert text.startswith("\ufeff")  # Excel reads UTF-8 as UTF-8 only with a byte order mark
    rows = list(csv.reader(io.StringIO(text[1:])))
    assert rows[0] == RECORDS_SCHEMA.names and len(rows) == 1 + len(records)
    by_key = {row[0]: dict(zip(rows[0], row)) for row in rows[1:]}
    first = next(r for r in records if r["key"] == "telegram:777:1")
    assert by_key["telegram:777:1"]["text"] == first["text"] == "سلام دنیا #خبر"
    assert json.loads(by_key["telegram:777:1"]["hashtags"]) == first["hashtags"]
    assert by_key["telegram:777:1"]["created_at"] == first["created_at"]  # the instants of records.jsonl
    assert json.loads(by_key["telegram:777:1"]["metadata"]) == first["metadata"]

    book = openpyxl.load_workbook(folder / "records.xlsx", read_only=True)
    sheet = list(book["records"].iter_rows(values_only=True))
    assert list(sheet[0]) == RECORDS_SCHEMA.names and len(sheet) == 1 + len(records)
    assert summary.release_id in book["export"]["A1"].value
    # the parts carry no build time: the same records give the same bytes whenever they are built
    with zipfile.ZipFile(folder / "records.xlsx") as z:
        assert {info.date_time for info in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}

    package = json.loads((folder / "datapackage.json").read_text())
    described = {r["name"]: r for r in package["resources"]}
    assert described["records-csv"]["encoding"] == "utf-8-sig" and described["records-xlsx"]["path"] == "records.xlsx"
    manifest = {f["name"]: f["sha256"] for f in json.loads((folder / "manifest.json").read_text())["files"]}
    assert described["records-csv"]["hash"] == f"sha256:{manifest['records.csv']}"
