"""The edge rules: the relation edges a record contributes (pure; tuples, or a pandas frame of them). The relate
stage applies the same rules to Arrow columns and counts hashtags beside them (``pipeline/relate/parts.py``).

Node ids: ``src`` is always a record key. ``dst`` is a record key for reply/quote/repost (the target may
not be collected), ``{platform}:user:{handle}`` for a mention and ``hashtag:{tag}`` for a hashtag (tags
are shared across platforms on purpose: the same campaign hashtag on X and Telegram is one node).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from crawl_assets.schema.record import Record

if TYPE_CHECKING:  # pandas (with pyarrow) costs ~100 MiB and ~1 s to import: only the frame builder needs it
    import pandas as pd

EDGE_COLUMNS = ["type", "src", "dst", "created_at", "platform", "tenant"]

EdgeRow = tuple[str, str, str, datetime, str, str]


class EdgeRule(NamedTuple):
    """One kind of edge: a record's ``field`` (one value, or a list: one edge per item) gives the node ``dst``,
    written ``{platform}{prefix}{value}`` when ``per_platform``, else ``{prefix}{value}``."""

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
    for (kind, _, many, prefix, per_platform), value in zip(EDGE_RULES, values):
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
