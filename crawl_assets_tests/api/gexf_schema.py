"""A GEXF document checked against the GEXF 1.2 schema through ``gexfpy``: xsdata bindings generated from the
official XSD (a registry package, so no schema file lives in this repository).

xsdata's parser alone is lenient where a validator must not be, so the check is three steps:

1. a strict parse: an element the schema does not declare fails (``fail_on_unknown_properties``), and so
   does a value its type cannot hold, e.g. ``weight="heavy"`` or ``defaultedgetype="sideways"``
   (``fail_on_converter_warnings``);
2. every attribute and element the schema marks required is present (xsdata records ``required`` from the
   XSD but does not enforce it);
3. a round trip: the parsed document serialized again carries the same elements and attributes with equal
   values; an attribute the schema does not declare (which xsdata would silently drop) shows up here.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any
from xml.etree import ElementTree

from gexfpy import Gexf
from xsdata.formats.dataclass.parsers import XmlParser
from xsdata.formats.dataclass.parsers.config import ParserConfig
from xsdata.formats.dataclass.serializers import XmlSerializer

NS = "http://www.gexf.net/1.2draft"
_XSI = "{http://www.w3.org/2001/XMLSchema-instance}"


class InvalidGexf(AssertionError):
    pass


def _required(obj: Any, path: str) -> None:
    if isinstance(obj, list):
        for i, item in enumerate(obj):
            _required(item, f"{path}[{i}]")
        return
    if not dataclasses.is_dataclass(obj):
        return
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.metadata.get("required") and (value is None or value == []):
            raise InvalidGexf(f"{path}: required {f.metadata.get('type', 'field').lower()} "
                              f"{f.metadata.get('name', f.name)!r} is missing")
        _required(value, f"{path}/{f.name}")


def _same_value(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return math.isclose(float(a), float(b))
    except ValueError:
        return False


def _same_tree(original: ElementTree.Element, again: ElementTree.Element, path: str) -> None:
    if original.tag != again.tag:
        raise InvalidGexf(f"{path}: element {original.tag} came back as {again.tag}")
    mine = {k: v for k, v in original.attrib.items() if not k.startswith(_XSI)}
    theirs = {k: v for k, v in again.attrib.items() if not k.startswith(_XSI)}
    if set(mine) != set(theirs):
        raise InvalidGexf(f"{path}: attributes not in the schema: {sorted(set(mine) - set(theirs))}"
                          + (f"; added {sorted(set(theirs) - set(mine))}" if set(theirs) - set(mine) else ""))
    for name, value in mine.items():
        if not _same_value(value, theirs[name]):
            raise InvalidGexf(f"{path}/@{name}: {value!r} came back as {theirs[name]!r}")
    if (original.text or "").strip() != (again.text or "").strip():
        raise InvalidGexf(f"{path}: text {original.text!r} came back as {again.text!r}")
    if len(original) != len(again):
        raise InvalidGexf(f"{path}: {len(original)} child elements came back as {len(again)}")
    for i, (a, b) in enumerate(zip(original, again)):
        _same_tree(a, b, f"{path}/{a.tag.rsplit('}', 1)[-1]}[{i}]")


def validate(data: bytes) -> Gexf:
    """The parsed document, or ``InvalidGexf`` naming the first place it breaks the GEXF 1.2 schema."""
    try:
        original = ElementTree.fromstring(data)  # well-formed XML first (xsdata's event parser builds partial trees)
    except ElementTree.ParseError as exc:
        raise InvalidGexf(f"not XML: {exc}") from exc
    if original.tag != f"{{{NS}}}gexf":
        raise InvalidGexf(f"root element {original.tag}, not {{{NS}}}gexf")
    config = ParserConfig(fail_on_unknown_properties=True, fail_on_converter_warnings=True)
    try:
        doc = XmlParser(config=config).from_bytes(data, Gexf)
    except Exception as exc:  # xsdata raises ParserError or ConverterError
        raise InvalidGexf(f"not GEXF 1.2: {exc}") from exc
    _required(doc, "gexf")
    again = XmlSerializer().render(doc).encode("utf-8")
    _same_tree(original, ElementTree.fromstring(again), "gexf")
    return doc
