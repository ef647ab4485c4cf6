"""A normalized part's edges and hashtag counts, computed in Arrow a record batch at a time.

Only the rows that are their key's latest observation are used (``latest_rows``), never a superseded version
of an edited X post; the edges follow ``normalize.edges.EDGE_RULES`` (as ``record_edges`` does a record at a time), and
the counts are added to a ``Summaries`` (bounded by distinct hashtag pairs and author–hashtag pairs). The
edges come a record batch at a time (``part_edge_batches``), written as they come.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import datetime
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.lake import Lake
from crawl_assets.lake.tables import EDGES_SCHEMA
from crawl_assets.normalize.dedupe import key_hash
from crawl_assets.normalize.edges import EDGE_RULES, is_superseded
from crawl_assets.pipeline.normalize.stage import TABLE as RECORDS_TABLE
from crawl_assets.schema.record import Record

if TYPE_CHECKING:  # pandas costs ~100 MiB and ~1 s to import: only the frames need it
    import pandas as pd

EDGE_ORDER = [("type", "ascending"), ("src", "ascending"), ("dst", "ascending")]
READ_COLUMNS = ["key", "created_at", "platform", "tenant", "author_id", "reply_to", "quote_of", "repost_of",
                "mentions", "hashtags", "metadata"]
COOCCURRENCE_COLUMNS = ["platform", "tenant", "hashtag_a", "hashtag_b", "count", "first_at", "last_at"]
AUTHOR_HASHTAG_COLUMNS = ["platform", "tenant", "author_id", "hashtag", "count", "first_at", "last_at"]
BATCH_ROWS = 5_000
SEARCH_ROWS = 1 << 16  # hashes looked up at a time among the repeated ones


def latest_rows(lake: Lake, tenant: str, platform: str, source: str, ids: Collection[str]
                ) -> tuple[list[tuple[str, np.ndarray]], pa.Array]:
    """Per part of ``ids`` (collection order), which of its rows are their key's latest observation among
    those parts (later parts and later rows win), and the keys, each once. Only key columns are read."""
    found, columns = [], []
    for batch_id, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source, columns=["key"],
                                           include=set(ids).__contains__):
        found.append(batch_id)
        columns.append(table.column("key").combine_chunks())
    keys = pa.concat_arrays(columns) if columns else pa.array([], pa.string())
    unique, last = last_positions(keys)
    chosen = np.zeros(len(keys), dtype=bool)
    chosen[last] = True
    masks, offset = [], 0
    for batch_id, column in zip(found, columns):
        masks.append((batch_id, chosen[offset:offset + len(column)]))
        offset += len(column)
    return masks, unique


def latest_masks(lake: Lake, tenant: str, platform: str, source: str, ids: Collection[str],
                 hash_key: Callable[[str], int] = key_hash) -> list[tuple[str, np.ndarray]]:
    """``latest_rows``' masks from 64-bit key hashes (8 bytes a row, the key columns streamed, not held): a row
    whose hash no other row has is its key's only one; rows whose hash repeats are decided by their keys, read
    back (exact). One array of the hashes and one sorted copy (freed before the masks are made) are held."""
    found: list[str] = []
    pieces: list[np.ndarray] = []
    wanted = set(ids)
    for batch_id in [i for i in lake.part_ids(RECORDS_TABLE, tenant, platform, source) if i in wanted]:
        part = lake.table_part(RECORDS_TABLE, tenant, platform, source, batch_id)
        hashes = np.fromiter((hash_key(k) for batch in lake.iter_part_batches(part, columns=["key"],
                                                                             batch_size=BATCH_ROWS)
                              for k in batch.column(0).to_pylist()), dtype=np.uint64)
        found.append(batch_id)
        pieces.append(hashes)
    sizes = [len(h) for h in pieces]
    every = pieces[0] if len(pieces) == 1 else np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.uint64)
    del pieces
    ordered = np.sort(every)
    twice = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])  # the hashes more than one row has
    del ordered
    shared = np.zeros(len(every), dtype=bool)
    if len(twice):
        for start in range(0, len(every), SEARCH_ROWS):  # in slices: all at once would hold 8 bytes a row
            piece = every[start:start + SEARCH_ROWS]
            at = np.minimum(np.searchsorted(twice, piece), len(twice) - 1)
            shared[start:start + len(piece)] = twice[at] == piece
    chosen = ~shared
    repeated = np.flatnonzero(shared)
    if len(repeated):
        keys = _keys_at(lake, tenant, platform, source, found, sizes, repeated)
        latest: dict[str, int] = {}
        for position, key in zip(repeated.tolist(), keys):
            latest[key] = position
        chosen[list(latest.values())] = True
    masks, offset = [], 0
    for batch_id, size in zip(found, sizes):
        masks.append((batch_id, chosen[offset:offset + size]))
        offset += size
    return masks


def _keys_at(lake: Lake, tenant: str, platform: str, source: str, parts: list[str], sizes: list[int],
             positions: np.ndarray) -> list[str]:
    """The keys at ``positions`` (ascending) of the parts read one after another."""
    out: list[str] = []
    offset = 0
    for batch_id, size in zip(parts, sizes):
        inside = positions[(positions >= offset) & (positions < offset + size)] - offset
        if len(inside):
            [(_, table)] = lake.read_parts(RECORDS_TABLE, tenant, platform, source, columns=["key"],
                                           include=batch_id.__eq__)
            out += table.column("key").take(pa.array(inside)).to_pylist()
        offset += size
    return out


def last_positions(keys: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """Each distinct key once (in order of first appearance) and the position of its last occurrence.
    A dictionary encoding and one numpy pass: Arrow's hash ``group_by`` kept ~45 MiB (100k keys) in its
    allocator's arenas after it returned."""
    encoded = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    encoded = encoded.dictionary_encode()
    last = np.full(len(encoded.dictionary), -1, dtype=np.int64)
    np.maximum.at(last, encoded.indices.to_numpy(zero_copy_only=False), np.arange(len(encoded), dtype=np.int64))
    return encoded.dictionary, last


def live_batches(lake: Lake, tenant: str, platform: str, source: str, batch_id: str, mask: np.ndarray | None
                 ) -> Iterator[pa.Table]:
    """The part's rows picked by ``mask`` (all when None) that are no superseded version, in batches of the
    columns edges and counts read."""
    offset = 0
    part = lake.table_part(RECORDS_TABLE, tenant, platform, source, batch_id)
    for batch in lake.iter_part_batches(part, columns=READ_COLUMNS, batch_size=BATCH_ROWS):
        rows = pa.Table.from_batches([batch])
        if mask is not None:
            rows = rows.filter(pa.array(mask[offset:offset + batch.num_rows]))
        offset += batch.num_rows
        yield rows.filter(pc.invert(superseded(rows.column("metadata"))))


def superseded(metadata: pa.ChunkedArray) -> pa.Array:
    """Which rows are a superseded version (JSON parsed only where the text names ``superseded_by``)."""
    hits = pc.fill_null(pc.match_substring(metadata, '"superseded_by"'), False).to_numpy(zero_copy_only=False)
    flags = np.zeros(len(metadata), dtype=bool)
    for i in np.flatnonzero(hits):
        flags[i] = is_superseded(orjson.loads(metadata[int(i)].as_py()))
    return pa.array(flags)


def edges_of(rows: pa.Table) -> pa.Table:
    """The edges of ``rows`` (``EDGES_SCHEMA``) by ``EDGE_RULES``, each (type, src, dst) once, sorted by it."""
    key, at, platform, tenant = (rows.column(c).combine_chunks() for c in ("key", "created_at", "platform", "tenant"))
    pieces = []
    for rule in EDGE_RULES:
        values = rows.column(rule.field).combine_chunks()
        if rule.many:
            index, values = pc.list_parent_indices(values), pc.list_flatten(values)
        else:
            index = pa.array(np.flatnonzero(pc.fill_null(pc.greater(pc.utf8_length(values), 0), False)
                                            .to_numpy(zero_copy_only=False)))
            values = values.take(index)
        head = (pc.binary_join_element_wise(platform.take(index), pa.scalar(rule.prefix), "")
                if rule.per_platform else pa.scalar(rule.prefix))
        dst = pc.binary_join_element_wise(head, values, "") if rule.prefix or rule.per_platform else values
        pieces.append(pa.table([pa.array([rule.type] * len(index), pa.string()), key.take(index), dst, at.take(index),
                                platform.take(index), tenant.take(index)], schema=EDGES_SCHEMA))
    return unique_edges(pa.concat_tables(pieces))


def unique_edges(edges: pa.Table) -> pa.Table:
    """``edges`` sorted by (type, src, dst), the first of equal ones kept (all of a record: the same row)."""
    edges = edges.take(pc.sort_indices(edges, sort_keys=EDGE_ORDER)).combine_chunks()
    if edges.num_rows < 2:
        return edges
    same = np.ones(edges.num_rows - 1, dtype=bool)
    for name in ("type", "src", "dst"):
        column = edges.column(name)
        same &= pc.equal(column.slice(1), column.slice(0, edges.num_rows - 1)).to_numpy(zero_copy_only=False)
    return edges.filter(pa.array(np.concatenate([[True], ~same])))


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


def count_into(summaries: Summaries, rows: pa.Table) -> None:
    """Add the hashtag counts of ``rows`` (only rows with hashtags become Python values)."""
    tagged = rows.filter(pc.greater(pc.list_value_length(rows.column("hashtags")), 0))
    columns = [tagged.column(c).to_pylist() for c in ("platform", "tenant", "author_id", "hashtags", "created_at")]
    for platform, tenant, author, tags, at in zip(*columns):
        summaries.add(platform, tenant, author, tags, at)


def part_edge_batches(lake: Lake, tenant: str, platform: str, source: str, batch_id: str, mask: np.ndarray | None,
                      summaries: Summaries) -> Iterator[tuple[pa.Table, int]]:
    """(edges, how many records they come from) per record batch of the part, their counts added to
    ``summaries``: a part's edges are never held whole. A record's rows are in one batch, so the edges of
    different batches never repeat each other (each batch's are sorted and unique)."""
    for rows in live_batches(lake, tenant, platform, source, batch_id, mask):
        count_into(summaries, rows)
        yield edges_of(rows), rows.num_rows
