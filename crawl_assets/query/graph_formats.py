"""A ``networks.Graph`` written as GEXF 1.2 (Gephi's format), GraphML or an edge-list CSV, as a stream of
byte chunks (a node or an edge at a time, grouped into chunks of about ``CHUNK`` bytes).

GEXF 1.2 (namespace ``http://www.gexf.net/1.2draft``) rather than 1.3: every Gephi since 0.8 opens it, networkx
writes it by default, and the tests validate it against the ``gexfpy`` bindings of its schema; 1.3 adds
nothing these graphs need (the edge's kind is an edge attribute here).

GEXF and GraphML carry the producing query and the caution note in their own metadata (``<meta>
<description>``, ``<desc>``); the CSV is a plain edge list Gephi's spreadsheet import reads (``Source``,
``Target``, ``Type``, ``Weight``, ...), so its query travels in the API response's ``X-Crawl-Query`` header.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from datetime import date
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import orjson

from crawl_assets.query import csv_cells
from crawl_assets.query.networks import CAUTION, Graph

CHUNK = 64 * 1024
FORMATS = {"gexf": "application/gexf+xml", "graphml": "application/graphml+xml", "csv": "text/csv; charset=utf-8"}
EXTENSIONS = {"gexf": "gexf", "graphml": "graphml", "csv": "csv"}
# Characters XML 1.0 cannot hold at all (control characters other than tab, newline, carriage return).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
NODE_ATTRS = [("kind", "string"), ("platform", "string"), ("handle", "string"), ("records", "integer")]
EDGE_ATTRS = [("first_at", "string"), ("last_at", "string")]
GEXF_EDGE_ATTRS = [*EDGE_ATTRS, ("kind", "string")]


def _a(value: Any) -> str:
    return quoteattr(_NOT_XML.sub("\ufffd", str(value)))


def _t(value: Any) -> str:
    return escape(_NOT_XML.sub("\ufffd", str(value)))


def _chunks(parts: Iterator[str]) -> Iterator[bytes]:
    buf: list[str] = []
    size = 0
    for part in parts:
        buf.append(part)
        size += len(part)
        if size >= CHUNK:
            yield "".join(buf).encode("utf-8")
            buf, size = [], 0
    if buf:
        yield "".join(buf).encode("utf-8")


def describe(graph: Graph, query: dict[str, Any]) -> str:
    return (f"crawl_assets {graph.kind} network. Query: {orjson.dumps(query).decode()}. Records: {graph.records}; "
            f"without an author: {graph.skipped_no_author}; links to records not in the index: {graph.unresolved}. "
            + CAUTION)


def gexf(graph: Graph, query: dict[str, Any]) -> Iterator[bytes]:
    def parts() -> Iterator[str]:
        yield ('<?xml version="1.0" encoding="UTF-8"?>\n'
               '<gexf xmlns="http://www.gexf.net/1.2draft" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
               'xsi:schemaLocation="http://www.gexf.net/1.2draft http://www.gexf.net/1.2draft/gexf.xsd" version="1.2">\n'
               f'  <meta lastmodifieddate="{date.today().isoformat()}">\n    <creator>crawl_assets</creator>\n'
               f'    <keywords>{_t(graph.kind)}</keywords>\n    <description>{_t(describe(graph, query))}</description>\n'
               '  </meta>\n'
               f'  <graph defaultedgetype="{"directed" if graph.directed else "undirected"}" mode="static">\n'
               '    <attributes class="node">\n')
        for i, (name, kind) in enumerate(NODE_ATTRS):
            yield f'      <attribute id="n{i}" title="{name}" type="{kind}"/>\n'
        yield '    </attributes>\n    <attributes class="edge">\n'
        for i, (name, kind) in enumerate(GEXF_EDGE_ATTRS):
            yield f'      <attribute id="e{i}" title="{name}" type="{kind}"/>\n'
        yield f'    </attributes>\n    <nodes count="{len(graph.nodes)}">\n'
        for node in graph.nodes.values():
            values = "".join(f'<attvalue for="n{i}" value={_a(getattr(node, name))}/>'
                             for i, (name, _) in enumerate(NODE_ATTRS))
            yield f'      <node id={_a(node.id)} label={_a(node.label)}><attvalues>{values}</attvalues></node>\n'
        yield f'    </nodes>\n    <edges count="{len(graph.edges)}">\n'
        for i, ((a, b), e) in enumerate(graph.edges.items()):
            yield (f'      <edge id="{i}" source={_a(a)} target={_a(b)} weight="{e.weight}">'
                   f'<attvalues><attvalue for="e0" value={_a(e.first_at)}/><attvalue for="e1" value={_a(e.last_at)}/>'
                   f'<attvalue for="e2" value={_a(graph.kind)}/></attvalues></edge>\n')
        yield '    </edges>\n  </graph>\n</gexf>\n'

    return _chunks(parts())


def graphml(graph: Graph, query: dict[str, Any]) -> Iterator[bytes]:
    types = {"string": "string", "integer": "int"}

    def parts() -> Iterator[str]:
        yield ('<?xml version="1.0" encoding="UTF-8"?>\n'
               '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
               'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
               'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
               f'  <desc>{_t(describe(graph, query))}</desc>\n'
               '  <key id="label" for="node" attr.name="label" attr.type="string"/>\n')
        for name, kind in NODE_ATTRS:
            yield f'  <key id="{name}" for="node" attr.name="{name}" attr.type="{types[kind]}"/>\n'
        yield '  <key id="weight" for="edge" attr.name="weight" attr.type="double"/>\n'
        yield '  <key id="type" for="edge" attr.name="type" attr.type="string"/>\n'
        for name, kind in EDGE_ATTRS:
            yield f'  <key id="{name}" for="edge" attr.name="{name}" attr.type="{types[kind]}"/>\n'
        yield f'  <graph id="{graph.kind}" edgedefault="{"directed" if graph.directed else "undirected"}">\n'
        for node in graph.nodes.values():
            data = "".join(f'<data key="{name}">{_t(getattr(node, name))}</data>' for name in ("label", *dict(NODE_ATTRS)))
            yield f'    <node id={_a(node.id)}>{data}</node>\n'
        for (a, b), e in graph.edges.items():
            yield (f'    <edge source={_a(a)} target={_a(b)}><data key="weight">{e.weight}</data>'
                   f'<data key="type">{_t(graph.kind)}</data><data key="first_at">{_t(e.first_at)}</data>'
                   f'<data key="last_at">{_t(e.last_at)}</data></edge>\n')
        yield '  </graph>\n</graphml>\n'

    return _chunks(parts())


def edge_csv(graph: Graph, query: dict[str, Any]) -> Iterator[bytes]:
    """The edge list; node ids and labels (handles such as ``@name``) as cells no spreadsheet evaluates
    (``csv_cells``), the weight as a number."""
    def parts() -> Iterator[str]:
        buf = io.StringIO()
        writer = csv_cells.writer(buf)
        writer.writerow(["Source", "Target", "Type", "Kind", "Weight", "first_at", "last_at", "source_label",
                         "target_label"])
        edge_type = "Directed" if graph.directed else "Undirected"
        for (a, b), e in graph.edges.items():
            writer.writerow([csv_cells.cell(v) if v is not None else "" for v in (
                a, b, edge_type, graph.kind, e.weight, e.first_at, e.last_at, graph.nodes[a].label,
                graph.nodes[b].label)])
            if buf.tell() >= CHUNK:
                yield buf.getvalue()
                buf.seek(0)
                buf.truncate()
        yield buf.getvalue()

    return _chunks(parts())


WRITERS = {"gexf": gexf, "graphml": graphml, "csv": edge_csv}
