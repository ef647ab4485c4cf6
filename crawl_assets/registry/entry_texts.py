"""The registry's text cut at its entries, so that an edit rewrites only the entry it changes.

Reading 20,000 entries with ruamel's round-trip loader to pause one of them took 40 s; the fast loader already
knows where each item of the ``sources`` block sequence starts and ends, so an edit re-reads (with ruamel, comments
kept) and re-writes only its own entry, and leaves every other byte as it was. Each rewritten entry is read back
by the fast loader and must give exactly the data meant; whatever cannot be cut or checked so goes through the
round-trip loader whole, as before.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml
from ruamel.yaml.error import YAMLError as RoundTripError

from crawl_assets.registry.yaml_safe import AnchorRefused, Lines, Unusual, fast_load, roundtrip

_WRAP = "sources:\n"
# line ends libyaml counts (CR alone, NEL, LS, PS) or str.splitlines does (VT, FF, FS, GS, RS) beside LF and CRLF
_OTHER_BREAKS = re.compile(r"\r(?!\n)|[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


@dataclass
class EntryTexts:
    head: str  # up to the first entry
    items: list[str]  # each entry's lines, with the comments and blank lines after it up to the next entry
    tail: str  # after the last entry's last line with content
    dash: int  # column of the entries' '-'
    column: int  # column of their content

    @classmethod
    def cut(cls, text: str, lines: Lines) -> EntryTexts | None:
        """The cut of ``text`` (read by :func:`fast_load` into ``lines``), or None when its layout is unusual:
        no block ``sources`` list or no entry yet, entries not each on their own lines after a '-' at one column,
        line breaks other than LF and CRLF."""
        if not lines.sources_block or not lines.items or _OTHER_BREAKS.search(text):
            return None
        rows = text.splitlines(keepends=True)  # on LF and CRLF only, the others being absent
        column = lines.items[0][2]
        dash = rows[lines.items[0][0]].find("-")
        lead = " " * dash + "-" + " " * (column - dash - 1)
        starts = [first for first, _, _ in lines.items]
        if dash < 0 or any(col != column or not rows[first].startswith(lead) for first, _, col in lines.items) \
                or starts != sorted(set(starts)):
            return None
        last = lines.items[-1][1]
        items = ["".join(rows[a:b]) for a, b in zip(starts, starts[1:])] + ["".join(rows[starts[-1]:last + 1])]
        return cls("".join(rows[:starts[0]]), items, "".join(rows[last + 1:]), dash, column)

    def text(self) -> str:
        return self.head + "".join(self.items) + self.tail

    def new_item(self, data: dict[str, Any]) -> str | None:
        """``data`` as one more item, or None when it would not read back as ``data``."""
        out = io.StringIO()
        roundtrip().dump(data, out)
        rows = out.getvalue().splitlines(keepends=True)
        lead = " " * self.dash + "-" + " " * (self.column - self.dash - 1)
        item = lead + rows[0] + "".join(" " * self.column + row if row.strip() else row for row in rows[1:])
        return item if _reads_as(item, data) else None

    def append(self, item: str) -> None:
        if self.items and not self.items[-1].endswith("\n"):
            self.items[-1] += "\n"
        self.items.append(item)

    def changed_item(self, index: int, change: Callable[[Any], None], plain: Callable[[Any], Any]) -> str | None:
        """Item ``index`` read by ruamel (its comments kept), changed by ``change`` and written again; None when
        the result would not read back as the changed entry."""
        y = roundtrip()
        y.indent(mapping=2, sequence=self.column, offset=self.dash)
        try:
            doc = y.load(_WRAP + self.items[index])
        except (RoundTripError, AnchorRefused):
            return None
        if not isinstance(doc, dict) or not isinstance(doc.get("sources"), list) or len(doc["sources"]) != 1:
            return None
        change(doc["sources"][0])
        out = io.StringIO()
        y.dump(doc, out)
        text = out.getvalue()
        if not text.startswith(_WRAP):
            return None
        item = text[len(_WRAP):]
        return item if _reads_as(item, plain(doc["sources"][0])) else None


def _reads_as(item: str, data: Any) -> bool:
    """Whether ``item``, as an entry of the ``sources`` list, reads back as exactly ``data``."""
    try:
        doc, _ = fast_load((_WRAP + item).encode("utf-8"))
    except (yaml.YAMLError, AnchorRefused, Unusual):
        return False
    return isinstance(doc, dict) and doc.get("sources") == [data] and repr(doc["sources"][0]) == repr(data)
