"""CSV that cannot attack its reader: collected text and handles become cells a spreadsheet shows, never
formulas it runs (CSV / formula injection, OWASP; CWE-1236).

* A text cell whose first character is ``=``, ``+``, ``-``, ``@``, tab, carriage return or NUL (the
  characters spreadsheets start a formula with) gets a leading single quote: ``=HYPERLINK(...)`` is written
  ``'=HYPERLINK(...)``. So that the quote can always be taken off again, a cell that already starts with
  quotes before such a character gets one more: read back by dropping the first character of any text cell
  that matches ``'+[=+\\-@\\t\\r\\0]``.
* A text cell that is a plain number (``-1001234567``, a Telegram chat id; ``-5``) stays as it is: a number is
  not a formula, and typed numbers (an edge's weight) are written as numbers.
* Every text cell is quoted (``csv.QUOTE_NONNUMERIC``) and quotes inside are doubled (OWASP's escaping), so a
  separator or line break inside a value stays inside its cell.
"""

from __future__ import annotations

import csv
import json
import re
from typing import IO, Any

FORMULA_START = "=+-@\t\r\0"
_NEUTRALIZE = re.compile(r"'*[=+\-@\t\r\0]")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def cell(value: Any) -> Any:
    """A value as a cell that no spreadsheet evaluates (see the module docstring); numbers stay numbers."""
    if isinstance(value, str) and _NEUTRALIZE.match(value) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def writer(out: IO[str]) -> Any:
    """A ``csv.writer`` that quotes every text cell (numbers bare); pass its cells through ``cell``."""
    return csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)


def comment_line(prefix: str, value: Any) -> str:
    """``prefix`` and ``value`` as JSON on one line that splits into no cell a spreadsheet evaluates: items are
    separated by ", " (a cell after a separator starts with a space) and a comma or semicolon inside a string
    is written as its JSON escape (``\\u002c``, ``\\u003b``), so ``json.loads`` reads the same object."""
    return prefix + _json(value) + "\n"


def _json(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_json(str(k))}: {_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_json(v) for v in value) + "]"
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False).replace(",", "\\u002c").replace(";", "\\u003b")
