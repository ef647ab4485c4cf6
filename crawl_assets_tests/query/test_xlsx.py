"""The streamed XLSX writer, read back by openpyxl: numbers stay numbers, text stays text (never a formula, XML-
unsafe characters escaped), and a Persian cell that starts otherwise gets a right-to-left mark."""

from __future__ import annotations

import io

import openpyxl

from crawl_assets.query.xlsx import RLM, bidi_safe, workbook


def test_bidi_marks_only_where_a_persian_cell_starts_otherwise() -> None:
    assert bidi_safe("سلام دنیا") == "سلام دنیا"
    assert bidi_safe("iPhone خریدم") == RLM + "iPhone خریدم"
    assert bidi_safe("@user سلام") == RLM + "@user سلام"
    assert bidi_safe("۱۲ نفر آمدند") == "۱۲ نفر آمدند", "the first strong character (a Persian letter) decides"
    assert bidi_safe("hello 12") == "hello 12"


def test_a_workbook_streams_and_reads_back() -> None:
    rows = [[["a", "=1+2", 3, True, None], ["b", bidi_safe("iPhone خریدم ۱۲"), 1.5, False, "x\x01y_x0041_"]],
            [["c", "ك", 0, None, ""]]]
    chunks = list(workbook(["key", "text", "n", "flag", "other"], rows, '{"matched": 3}', right_to_left=True))
    assert len(chunks) >= 3, "bytes leave as batches are written"
    book = openpyxl.load_workbook(io.BytesIO(b"".join(chunks)))
    sheet = book["records"]
    assert sheet.sheet_view.rightToLeft
    got = [[c.value for c in row] for row in sheet.iter_rows()]
    assert got[0] == ["key", "text", "n", "flag", "other"]
    assert got[1][:4] == ["a", "=1+2", 3, True] and sheet["B2"].data_type == "s", "text, not a formula"
    assert got[2][1] == RLM + "iPhone خریدم ۱۲" and got[2][2] == 1.5, "Persian digits kept in text"
    assert got[2][4] in ("x\x01y_x0041_", "x_x0001_y_x005F_x0041_")
    assert book["export"]["A1"].value == '{"matched": 3}'
