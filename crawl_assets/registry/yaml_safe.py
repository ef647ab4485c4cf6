"""The YAML loaders of the registry (and of other operator files), each refusing anchors and aliases in its own
token or event stream, so nothing a loader has not scanned itself ever reaches it and nothing ever expands.

- :func:`fast_load` (sensors, runs, the webhook receiver, CLI reads): libyaml's events built straight into
  plain values, YAML 1.2 core-schema scalars as ruamel reads them, one pass, no composer; it also records the
  line of every mapping and key for error messages and the lines of each ``sources`` item for edits.
- :func:`roundtrip` (edits, and what the fast loader leaves to it: syntax errors, odd numbers, tags, repeated
  keys): ruamel.yaml's round-trip mode, whose scanner refuses ``&`` and ``*`` before it reads a name.
- :func:`safe_load` (retention, enrichment settings): PyYAML's safe loader with the same scanner refusal.

:class:`EntryTexts`: the registry's text cut at its entries, so an edit rewrites only its own entry (ruamel's
round-trip loader reading a whole large registry to pause one entry is slow): the fast loader knows where each
item of the ``sources`` block sequence starts and ends, so an edit re-reads (with ruamel, comments kept) and
re-writes only its own entry, and leaves every other byte as it was. Each rewritten entry is read back by the fast
loader and must give exactly the data meant; whatever cannot be cut or checked so goes through the round-trip
loader whole.
"""

from __future__ import annotations

import gc
import io
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError as RoundTripError
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scanner import RoundTripScanner
from yaml.cyaml import CParser
from yaml.events import (AliasEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent, ScalarEvent,
                         SequenceEndEvent, SequenceStartEvent, StreamEndEvent)

ANCHORS_REFUSED = ("YAML anchors and aliases (& and *) are not allowed here; write each value out in full")


class AnchorRefused(Exception):
    """An anchor or alias was met (``line`` 1-based): refused before its name is read or anything is built."""

    def __init__(self, line: int):
        super().__init__(f"line {line}: {ANCHORS_REFUSED}")
        self.line = line


class Unusual(Exception):
    """Something the fast loader leaves to the round-trip loader, which reads or refuses it with its position:
    a number spelled as the two libraries read differently, a key repeated in one mapping, a tag, a merge key,
    a key that is not a scalar, more than one document."""


# -- libyaml, one pass over events -------------------------------------------------------------------------------
# Plain scalars are typed by ruamel's own YAML 1.2 rules (its resolver table, first match wins); the fast loader
# builds the simple spellings itself and leaves every other one (0o17, 1_000, dates, ``<<``) to ruamel.
_RULES = {first: [(str(tag).rsplit(":", 1)[-1], re.compile(rx.pattern, rx.flags)) for tag, rx in rules]
          for first, rules in VersionedResolver(version=(1, 2)).versioned_resolver.items() if first is not None}
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][-+]?[0-9]+)?")


def _plain_scalar(value: str) -> Any:
    """A plain scalar as ruamel reads it (YAML 1.2 core schema); ``Unusual`` for what only ruamel builds."""
    for tag, rule in _RULES.get(value[:1], ()):
        if rule.match(value):
            break
    else:
        return value
    if tag == "null":
        return None
    if tag == "bool":
        return _BOOL[value]
    if tag == "int" and _INT.fullmatch(value):
        return int(value)
    if tag == "float":
        if _FLOAT.fullmatch(value):
            return float(value)
        text = value.lower()
        if text in (".inf", "+.inf", "-.inf", ".nan"):
            return -math.inf if text[0] == "-" else math.nan if text == ".nan" else math.inf
    raise Unusual(value)


@dataclass
class Lines:
    """Where things are (0-based lines): each mapping or sequence by ``id`` (its start line and, for a mapping, each
    key's line), and each item of the top-level ``sources`` block sequence."""

    nodes: dict[int, tuple[int, dict[Any, int] | None]] = field(default_factory=dict)
    items: list[list[int]] = field(default_factory=list)  # [first line, last line with content, item column]
    sources_block: bool = False  # ``sources`` is a block sequence of a top-level block mapping

    def field_line(self, raw: Any, loc: tuple[Any, ...]) -> int | None:
        """1-based line of the deepest key of ``loc`` found under ``raw`` (its own start line else), like ruamel's."""
        node = self.nodes.get(id(raw))
        if node is None:
            return None
        line = node[0]
        for part in loc:
            keys = node[1] if node is not None else None
            if not isinstance(raw, dict) or keys is None or part not in raw:
                break
            line = keys.get(part, line)
            raw = raw[part]
            node = self.nodes.get(id(raw))
        return line + 1


def fast_load(data: bytes | str) -> tuple[Any, Lines]:
    """The document and where its parts are. ``AnchorRefused`` at the first anchor or alias, ``Unusual`` for
    what the round-trip loader must read, ``yaml.YAMLError`` for a syntax error."""
    parser = CParser(data)
    get = parser.get_event
    collecting = gc.isenabled()
    gc.disable()  # many new containers, none of them cyclic: the collector would only rescan them
    lines = Lines()
    nodes, items = lines.nodes, lines.items
    stack: list[list[Any]] = []  # per open collection: [container, key read (or _NO_KEY), keys' lines, flow]
    sources: list[Any] | None = None  # the frame of the top-level ``sources`` block sequence, while open
    typed: dict[str, Any] = {}  # plain scalars already typed (keys and common values repeat in every entry)
    root: Any = None
    docs = 0
    try:
        while True:
            event = get()
            cls = event.__class__
            if cls is ScalarEvent:
                if event.anchor is not None:
                    raise AnchorRefused(event.start_mark.line + 1)
                tag = event.tag
                if tag is None and event.implicit[0]:
                    text = event.value
                    value = typed.get(text, _NO_KEY)
                    if value is _NO_KEY:
                        value = typed[text] = _plain_scalar(text)
                elif tag is None or tag == "!":
                    value = event.value
                else:
                    raise Unusual(f"tag {tag}")
                if sources is not None:
                    if stack[-1] is sources:  # a new item of ``sources``
                        items.append([event.start_mark.line, event.start_mark.line, event.start_mark.column])
                    end = event.end_mark  # the item reaches the line where this value ends (column 0: the line before)
                    last = end.line if end.column else end.line - 1
                    if items and last > items[-1][1]:
                        items[-1][1] = last
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                if event.anchor is not None:
                    raise AnchorRefused(event.start_mark.line + 1)
                if event.tag is not None and event.tag != "!":
                    raise Unusual(f"tag {event.tag}")
                start = event.start_mark
                if sources is not None and stack[-1] is sources:
                    items.append([start.line, start.line, start.column])
                mapping = cls is MappingStartEvent
                keys: dict[Any, int] | None = {} if mapping else None
                frame = [{} if mapping else [], _NO_KEY, keys, bool(event.flow_style)]
                nodes[id(frame[0])] = (start.line, keys)
                if not mapping and not frame[3] and len(stack) == 1 and stack[0][1] == "sources" and not stack[0][3]:
                    sources = frame
                    lines.sources_block = True
                stack.append(frame)
                continue
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                frame = stack.pop()
                if frame is sources:
                    sources = None
                elif frame[3] and sources is not None:  # a flow collection ends at its bracket
                    _content(items, event.end_mark)
                value = frame[0]
            elif cls is AliasEvent:
                raise AnchorRefused(event.start_mark.line + 1)
            elif cls is DocumentStartEvent:
                docs += 1
                if docs > 1 or event.version or event.tags:
                    raise Unusual("a directive, or more than one document")
                continue
            elif cls is StreamEndEvent:
                break
            else:  # stream start, document end
                continue
            if not stack:
                root = value
                continue
            top = stack[-1]
            if top[2] is None:  # in a sequence
                top[0].append(value)
            elif top[1] is _NO_KEY:
                if cls is not ScalarEvent:
                    raise Unusual("a key that is not a scalar")
                if value in top[0]:
                    raise Unusual("repeated key")
                top[1] = value
                top[2][value] = event.start_mark.line
            else:
                top[0][top[1]] = value
                top[1] = _NO_KEY
    finally:
        parser.dispose()
        if collecting:
            gc.enable()
    return root, lines


class _NoKey:
    """No key read yet for the next value of this mapping."""


_NO_KEY = _NoKey()


def _content(items: list[list[int]], end: Any) -> None:
    """Extend the current ``sources`` item to the line where content ended (a mark at column 0 is the next line's)."""
    if items:
        last = end.line if end.column > 0 else end.line - 1
        if last > items[-1][1]:
            items[-1][1] = last


# -- ruamel.yaml, round trip ---------------------------------------------------------------------------------------
class _GuardedRoundTripScanner(RoundTripScanner):
    def fetch_alias(self) -> None:
        raise AnchorRefused(self.reader.get_mark().line + 1)

    def fetch_anchor(self) -> None:
        raise AnchorRefused(self.reader.get_mark().line + 1)


def roundtrip() -> YAML:
    """ruamel.yaml in round-trip mode (comments and order kept), refusing anchors and aliases as it scans."""
    y = YAML(typ="rt")
    y.Scanner = _GuardedRoundTripScanner
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    return y


# -- PyYAML, safe ------------------------------------------------------------------------------------------------------
class _GuardedSafeLoader(yaml.SafeLoader):
    def fetch_alias(self) -> None:
        raise AnchorRefused(self.get_mark().line + 1)

    def fetch_anchor(self) -> None:
        raise AnchorRefused(self.get_mark().line + 1)


def safe_load(data: bytes | str) -> Any:
    """PyYAML's safe load (YAML 1.1 scalars), refusing anchors and aliases as it scans: for small operator files."""
    return yaml.load(data, Loader=_GuardedSafeLoader)  # noqa: S506 - a SafeLoader subclass


# -- the registry's text cut at its entries ----------------------------------------------------------------
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
