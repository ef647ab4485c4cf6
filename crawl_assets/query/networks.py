"""Networks of a filtered set of records: who replies to, quotes, reposts (forwards) or mentions whom, and
which hashtags occur together. ``graph_formats`` writes them as GEXF, GraphML or an edge-list CSV.

A link in these graphs is an observed interaction or co-occurrence, nothing more: proximity in a graph
is not evidence of coordination, shared authorship or intent (see docs/API.md, *Networks*).

* ``reply`` / ``quote`` / ``repost``: directed author → author. The source is the author of a filtered
  record, the target the author of the record it points to (looked up in the tenant's index, any source;
  targets the index does not hold are counted in ``unresolved``, not drawn).
* ``mention``: directed author → mentioned user. A mentioned handle that an author of the set uses is
  that author's node; otherwise the node is ``{platform}:@{handle}`` (kind ``mentioned``).
* ``hashtag``: undirected hashtag — hashtag, weighted by the records holding both.

Nodes carry ``label``, ``kind`` (author, mentioned, hashtag), ``platform``, ``handle`` and ``records`` (the
filtered records the node authored, or that hold the hashtag); edges ``weight`` (records), ``first_at``,
``last_at``. The scan and the graph are bounded (``MAX_RECORDS``, ``MAX_EDGES``): ``GraphTooLarge`` says
which bound and what to narrow.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

from crawl_assets.query.filters import RecordFilter, scoped_query
from crawl_assets.index.naming import read_alias
from crawl_assets.index.scan import scan

KINDS: tuple[str, ...] = ("reply", "mention", "repost", "quote", "hashtag")
MAX_RECORDS = 1_000_000
MAX_EDGES = 500_000
MAX_NODES = 500_000
PAGE = 5000
_TARGET = {"reply": "reply_to", "quote": "quote_of", "repost": "repost_of"}
_FIELDS = ["key", "platform", "author_id", "author_handle", "created_at", "reply_to", "quote_of", "repost_of",
           "mentions", "hashtags"]
CAUTION = ("A link in this graph is an observed interaction or co-occurrence in the collected records. "
           "Proximity in a graph is not evidence of coordination, shared authorship or intent.")


class GraphTooLarge(ValueError):
    """The filtered set or its graph is beyond the export bounds."""


@dataclass
class Node:
    id: str
    label: str
    kind: str
    platform: str
    handle: str
    records: int = 0


@dataclass
class EdgeStats:
    weight: int = 0
    first_at: str = ""
    last_at: str = ""

    def add(self, when: str | None) -> None:
        self.weight += 1
        if when:
            self.first_at = when if not self.first_at or when < self.first_at else self.first_at
            self.last_at = max(self.last_at, when)


@dataclass
class Graph:
    kind: str
    directed: bool
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: dict[tuple[str, str], EdgeStats] = field(default_factory=dict)
    records: int = 0
    skipped_no_author: int = 0
    unresolved: int = 0

    def node(self, node_id: str, **attrs: Any) -> Node:
        got = self.nodes.get(node_id)
        if got is None:
            if len(self.nodes) >= MAX_NODES:
                raise GraphTooLarge(f"the {self.kind} graph has more than {MAX_NODES} nodes: narrow the filter")
            got = self.nodes[node_id] = Node(node_id, **attrs)
        return got

    def link(self, a: str, b: str, when: str | None) -> None:
        key = (a, b) if self.directed or a <= b else (b, a)
        stats = self.edges.get(key)
        if stats is None:
            if len(self.edges) >= MAX_EDGES:
                raise GraphTooLarge(f"the {self.kind} graph has more than {MAX_EDGES} edges: narrow the filter")
            stats = self.edges[key] = EdgeStats()
        stats.add(when)


def author_node_id(doc: dict[str, Any]) -> str | None:
    return f"{doc['platform']}:{doc['author_id']}" if doc.get("author_id") else None


def scan_records(client: Elasticsearch, tenant: str, query: dict[str, Any], fields: list[str],
                 page: int = PAGE) -> Iterator[list[dict[str, Any]]]:
    """Pages of ``_source`` (only ``fields``) of every match, from one point in time of the tenant's alias."""
    for hits in scan(client, read_alias("records", tenant), query, source={"includes": fields}, page=page):
        yield [h.source or {} for h in hits]


def _author(graph: Graph, doc: dict[str, Any]) -> str | None:
    node_id = author_node_id(doc)
    if node_id is None:
        graph.skipped_no_author += 1
        return None
    handle = doc.get("author_handle") or ""
    node = graph.node(node_id, label=f"@{handle}" if handle else node_id, kind="author",
                      platform=doc["platform"], handle=handle)
    if handle and not node.handle:
        node.handle, node.label = handle, f"@{handle}"
    return node_id


def build_graph(client: Elasticsearch, tenant: str, flt: RecordFilter, kind: str) -> Graph:
    if kind not in KINDS:
        raise ValueError(f"unknown network {kind!r}; expected one of {', '.join(KINDS)}")
    graph = Graph(kind, directed=kind != "hashtag")
    query = scoped_query(tenant, flt)
    pending: list[tuple[str, str, str | None]] = []  # (source node, target record key, when)
    mentions: list[tuple[str, str, str, str | None]] = []  # (source node, platform, handle, when)
    for page in scan_records(client, tenant, query, _FIELDS):
        graph.records += len(page)
        if graph.records > MAX_RECORDS:
            raise GraphTooLarge(f"the filter matches more than {MAX_RECORDS} records: narrow it (dates, sources)")
        for doc in page:
            when = doc.get("created_at")
            if kind == "hashtag":
                tags = sorted(set(doc.get("hashtags") or []))
                for tag in tags:
                    graph.node(f"hashtag:{tag}", label=f"#{tag}", kind="hashtag", platform="", handle="").records += 1
                for a, b in combinations(tags, 2):
                    graph.link(f"hashtag:{a}", f"hashtag:{b}", when)
                continue
            src = _author(graph, doc)
            if src is None:
                continue
            graph.nodes[src].records += 1
            if kind == "mention":
                mentions.extend((src, doc["platform"], h, when) for h in doc.get("mentions") or [])
            elif doc.get(_TARGET[kind]):
                pending.append((src, doc[_TARGET[kind]], when))
                if len(pending) > MAX_EDGES * 4:
                    raise GraphTooLarge(f"more than {MAX_EDGES * 4} {kind} links: narrow the filter")
    if kind == "mention":
        _link_mentions(graph, mentions)
    elif kind != "hashtag":
        _link_targets(client, tenant, graph, pending)
    return graph


def _link_mentions(graph: Graph, mentions: list[tuple[str, str, str, str | None]]) -> None:
    by_handle = {(n.platform, n.handle.casefold()): n.id for n in graph.nodes.values() if n.handle}
    for src, platform, handle, when in mentions:
        dst = by_handle.get((platform, handle.casefold()))
        if dst is None:
            dst = graph.node(f"{platform}:@{handle}", label=f"@{handle}", kind="mentioned", platform=platform,
                             handle=handle).id
        graph.link(src, dst, when)


def _link_targets(client: Elasticsearch, tenant: str, graph: Graph, pending: list[tuple[str, str, str | None]]) -> None:
    targets = sorted({key for _, key, _ in pending})
    authors: dict[str, dict[str, Any]] = {}
    for i in range(0, len(targets), 1000):
        chunk = targets[i:i + 1000]
        try:
            resp = client.search(index=read_alias("records", tenant), ignore_unavailable=True, size=len(chunk),
                                 query=scoped_query(tenant, RecordFilter(deleted="include"), [{"terms": {"key": chunk}}]),
                                 source_includes=["key", "platform", "author_id", "author_handle"])
        except NotFoundError:
            break
        authors.update({h["_source"]["key"]: h["_source"] for h in resp["hits"]["hits"]})
    for src, key, when in pending:
        target = authors.get(key)
        dst = _author(graph, target) if target else None
        if dst is None:
            graph.unresolved += 1
            continue
        graph.link(src, dst, when)
