"""Relation edges and co-occurrence tables derived from records (pure; Arrow tables or pandas frames from tuples).

Node ids: ``src`` is always a record key. ``dst`` is a record key for reply/quote/repost (the target may
not be collected), ``{platform}:user:{handle}`` for a mention and ``hashtag:{tag}`` for a hashtag (tags
are shared across platforms on purpose: the same campaign hashtag on X and Telegram is one node).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from itertools import combinations
from typing import TYPE_CHECKING, Any, NamedTuple

from crawl_assets.schema.record import Record

if TYPE_CHECKING:  # pandas (with pyarrow) costs ~100 MiB and ~1 s to import: only the frame builders need it
    import pandas as pd
    import pyarrow as pa

EDGE_COLUMNS = ["type", "src", "dst", "created_at", "platform", "tenant"]
COOCCURRENCE_COLUMNS = ["platform", "tenant", "hashtag_a", "hashtag_b", "count", "first_at", "last_at"]
AUTHOR_HASHTAG_COLUMNS = ["platform", "tenant", "author_id", "hashtag", "count", "first_at", "last_at"]

EdgeRow = tuple[str, str, str, datetime, str, str]


class EdgeRule(NamedTuple):
    """One kind of edge: a record's ``field`` (one value, or a list: one edge per item) gives the node ``dst``,
    written ``{platform}:user:{value}`` when ``per_platform``, else ``{prefix}{value}``."""

    type: str
    field: str
    many: bool = False
    prefix: str = ""
    per_platform: bool = False


# The edge rules, in the order a record's edges come: every writer of edges (the relate stage over Arrow
# columns, ``pipeline/relate/parts.py: edges_of``; the CLI and the golden digests a record at a time,
# ``record_edges``) runs these, so a rule is changed here once.
EDGE_RULES = (
    EdgeRule("reply", "reply_to"),
    EdgeRule("quote", "quote_of"),
    EdgeRule("repost", "repost_of"),
    EdgeRule("mention", "mentions", many=True, prefix=":user:", per_platform=True),
    EdgeRule("hashtag", "hashtags", many=True, prefix="hashtag:"),
)
EDGE_FIELDS = ("key", "created_at", "platform", "tenant", *(rule.field for rule in EDGE_RULES))


def node_of(rule: EdgeRule, platform: str, value: str) -> str:
    """The ``dst`` node id an edge of ``rule`` gets from one value of its field."""
    return f"{platform}{rule.prefix}{value}" if rule.per_platform else f"{rule.prefix}{value}"


def mention_node(platform: str, handle: str) -> str:
    """The node id of a mentioned account."""
    return node_of(EDGE_RULES[3], platform, handle)


def hashtag_node(tag: str) -> str:
    """The node id of a hashtag (platform-independent)."""
    return node_of(EDGE_RULES[4], "", tag)


def is_superseded(metadata: dict[str, Any] | None) -> bool:
    """An earlier version of an edited X post (``metadata.superseded_by``): history, not a post of its own."""
    return bool((metadata or {}).get("superseded_by"))


def record_edges(record: Record) -> Iterator[EdgeRow]:
    """The edges one record contributes, as (type, src, dst, created_at, platform, tenant) tuples; none for
    a superseded version (its post's live version has the edges)."""
    if is_superseded(getattr(record, "metadata", None)):
        return iter(())
    return _edges(record.key, record.created_at, record.platform, record.tenant,
                  [getattr(record, rule.field) for rule in EDGE_RULES])


def document_edges(doc: dict[str, Any]) -> Iterator[EdgeRow]:
    """``record_edges`` of a record document (the unvalidated dict form, see ``normalize_documents``)."""
    if is_superseded(doc.get("metadata")):
        return iter(())
    return _edges(doc["key"], doc["created_at"], doc["platform"], doc["tenant"], [doc[rule.field] for rule in EDGE_RULES])


def _edges(src: str, at: datetime, platform: str, tenant: str, values: list[Any]) -> Iterator[EdgeRow]:
    for (kind, _, many, prefix, per_platform), value in zip(EDGE_RULES, values):  # node_of, inlined
        head = f"{platform}{prefix}" if per_platform else prefix
        if many:
            for item in value:
                yield (kind, src, f"{head}{item}", at, platform, tenant)
        elif value:
            yield (kind, src, f"{head}{value}", at, platform, tenant)


def _frame(rows: list[tuple[Any, ...]], columns: list[str], time_columns: tuple[str, ...]) -> pd.DataFrame:
    import pandas as pd

    frame = pd.DataFrame.from_records(rows, columns=columns)
    for column in time_columns:
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame


def edges_frame(records: Iterable[Record]) -> pd.DataFrame:
    """All edges of ``records`` (columns ``EDGE_COLUMNS``; ``created_at`` is the source record's time)."""
    rows = [edge for record in records for edge in record_edges(record)]
    return _frame(rows, EDGE_COLUMNS, ("created_at",))


def _bump(table: dict[tuple[Any, ...], list[Any]], key: tuple[Any, ...], at: datetime) -> None:
    entry = table.get(key)
    if entry is None:
        table[key] = [1, at, at]
    else:
        entry[0] += 1
        if at < entry[1]:
            entry[1] = at
        if at > entry[2]:
            entry[2] = at


class Summaries:
    """Hashtag co-occurrence (pairs ordered a < b, per platform and tenant) and author–hashtag participation
    counts with first and last times, added one record at a time."""

    def __init__(self) -> None:
        self.pairs: dict[tuple[Any, ...], list[Any]] = {}
        self.authors: dict[tuple[Any, ...], list[Any]] = {}

    def add(self, platform: str, tenant: str, author_id: str | None, hashtags: list[str], at: datetime) -> None:
        for a, b in combinations(sorted(hashtags), 2):
            _bump(self.pairs, (platform, tenant, a, b), at)
        if author_id is not None:  # records without an author are left out of participation
            for tag in hashtags:
                _bump(self.authors, (platform, tenant, author_id, tag), at)

    def add_records(self, records: Iterable[Record]) -> "Summaries":
        for record in records:
            self.add(record.platform, record.tenant, record.author_id, record.hashtags, record.created_at)
        return self

    def tables(self) -> dict[str, pa.Table]:
        """``hashtag_cooccurrence`` and ``author_hashtag`` as Arrow tables, rows in key order (the relation
        step writes them as they are: pandas is never loaded in a sync)."""
        return {"hashtag_cooccurrence": _counts_table(self.pairs, COOCCURRENCE_COLUMNS),
                "author_hashtag": _counts_table(self.authors, AUTHOR_HASHTAG_COLUMNS)}

    def frames(self) -> dict[str, pd.DataFrame]:
        """``tables`` as pandas frames."""
        return {name: table.to_pandas() for name, table in self.tables().items()}


def _counts_table(table: dict[tuple[Any, ...], list[Any]], columns: list[str]) -> pa.Table:
    """Four key columns (strings), the count and the first and last times: the types pandas gives the same
    rows, now also when there are none."""
    import pyarrow as pa

    rows = [key + tuple(value) for key, value in sorted(table.items())]
    values = list(zip(*rows)) if rows else [()] * len(columns)
    at = pa.timestamp("us", tz="UTC")
    types = [pa.large_string()] * 4 + [pa.int64(), at, at]
    return pa.table([pa.array(list(v), t) for v, t in zip(values, types, strict=True)], names=columns)


def hashtag_cooccurrence(records: Iterable[Record]) -> pd.DataFrame:
    """How often two hashtags appear in the same record (pairs ordered a < b), per platform and tenant."""
    return Summaries().add_records(records).frames()["hashtag_cooccurrence"]


def author_hashtag(records: Iterable[Record]) -> pd.DataFrame:
    """How often each author used each hashtag (records without an author are left out)."""
    return Summaries().add_records(records).frames()["author_hashtag"]
