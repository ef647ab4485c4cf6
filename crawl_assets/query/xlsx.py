"""A streamed XLSX workbook of one sheet: rows in, the file's bytes out as they are made.

Written here rather than with openpyxl or XlsxWriter: both assemble the whole file at ``save`` (write-only
and constant-memory modes spool the sheet to a temporary file first), while an export must send its bytes
while it reads. One sheet of inline strings and numbers needs five small XML parts; the sheet part is
deflated into the zip as rows come (a zip written to a stream: sizes in data descriptors).

Cells: numbers are numeric cells; text is an inline string (never a formula: a cell is a formula only inside
``<f>``), with the characters XML 1.0 cannot hold escaped as OOXML does (``_x000B_``) and an underscore that
would read as such an escape escaped itself (``_x005F_``). ``bidi_safe`` is for the writer's free-text cells:
a leading RIGHT-TO-LEFT MARK when the letters are Persian or Arabic but the first strong character is not
(``iPhone خریدم``, ``@user سلام``), so the cell reads right to left as it would in a Persian document.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable, Iterator
from typing import Any
from xml.sax.saxutils import escape

RLM = "\u200f"
MAX_ROWS = 1_048_576  # a sheet's rows, header included
MAX_CELL = 32_767  # characters in a cell
_RTL = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
_STRONG = re.compile(r"[^\W\d_]")  # letters: the first one decides a paragraph's direction
_BAD_XML = re.compile(r"_(?=x[0-9A-Fa-f]{4}_)|[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

_CONTENT_TYPES = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                  '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                  '<Default Extension="xml" ContentType="application/xml"/>'
                  '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.'
                  'spreadsheetml.sheet.main+xml"/>'
                  '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-'
                  'officedocument.spreadsheetml.worksheet+xml"/>'
                  '<Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.openxmlformats-'
                  'officedocument.spreadsheetml.worksheet+xml"/></Types>')
_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
         '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
         '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
         'officeDocument" Target="xl/workbook.xml"/></Relationships>')
_WORKBOOK_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                  '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
                  'worksheet" Target="worksheets/sheet1.xml"/>'
                  '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
                  'worksheet" Target="worksheets/sheet2.xml"/></Relationships>')
_NS = ('xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
       'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"')


def bidi_safe(text: str) -> str:
    """``text`` with a RIGHT-TO-LEFT MARK first when it has Persian/Arabic letters but starts otherwise."""
    if not _RTL.search(text) or text.startswith(RLM):
        return text
    first = _STRONG.search(text)
    return text if first is not None and _RTL.match(first.group(0)) else RLM + text


def _text(value: str) -> str:
    value = _BAD_XML.sub(lambda m: "_x005F_" if m.group(0) == "_" else f"_x{ord(m.group(0)):04X}_", value)
    return escape(value[:MAX_CELL])


def _column(n: int) -> str:
    name = ""
    while n:
        n, rest = divmod(n - 1, 26)
        name = chr(65 + rest) + name
    return name


def _row(number: int, cells: Iterable[Any]) -> str:
    out = [f'<row r="{number}">']
    for i, value in enumerate(cells, 1):
        ref = f"{_column(i)}{number}"
        if value is None or value == "":
            continue
        if isinstance(value, bool):
            out.append(f'<c r="{ref}" t="b"><v>{int(value)}</v></c>')
        elif isinstance(value, (int, float)):
            out.append(f'<c r="{ref}"><v>{value!r}</v></c>')
        else:
            out.append(f'<c r="{ref}" t="inlineStr"><is><t xml:space="preserve">{_text(str(value))}</t></is></c>')
    out.append("</row>")
    return "".join(out)


class _Buffer:
    """The stream zipfile writes to: what it wrote so far, taken by ``drain``."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.size += len(data)
        return len(data)

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        pass

    def drain(self) -> bytes:
        out, self.parts = b"".join(self.parts), []
        return out


def _part(name: str) -> zipfile.ZipInfo:
    """A zip entry dated 1980-01-01 (zip's first date): the same rows make the same bytes (releases rebuild
    byte for byte); a workbook's own time is not in its parts."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def workbook(header: list[str], rows: Iterable[Iterable[Iterable[Any]]], note: str, sheet: str = "records",
             right_to_left: bool = False) -> Iterator[bytes]:
    """The bytes of an XLSX file: sheet ``sheet`` with ``header`` then the rows (given in batches; fewer than
    ``MAX_ROWS`` in all, the caller's limit), and a second sheet, ``export``, whose cell A1 holds ``note``."""
    buf = _Buffer()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:  # type: ignore[arg-type]
        z.writestr(_part("[Content_Types].xml"), _CONTENT_TYPES)
        z.writestr(_part("_rels/.rels"), _RELS)
        z.writestr(_part("xl/_rels/workbook.xml.rels"), _WORKBOOK_RELS)
        z.writestr(_part("xl/workbook.xml"), f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook {_NS}>'
                                      f'<sheets><sheet name="{escape(sheet)}" sheetId="1" r:id="rId1"/>'
                                      f'<sheet name="export" sheetId="2" r:id="rId2"/></sheets></workbook>')
        z.writestr(_part("xl/worksheets/sheet2.xml"), f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                                               f'<worksheet {_NS}><sheetData>{_row(1, [note])}</sheetData></worksheet>')
        yield buf.drain()
        with z.open(_part("xl/worksheets/sheet1.xml"), "w", force_zip64=True) as part:
            view = ' rightToLeft="1"' if right_to_left else ""
            part.write(f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet {_NS}>'
                       f'<sheetViews><sheetView workbookViewId="0"{view}/></sheetViews><sheetData>'.encode())
            part.write(_row(1, header).encode())
            number = 1
            for batch in rows:
                chunk = []
                for cells in batch:
                    number += 1
                    chunk.append(_row(number, cells))
                part.write("".join(chunk).encode())
                yield buf.drain()
            part.write(b"</sheetData></worksheet>")
    yield buf.drain()
