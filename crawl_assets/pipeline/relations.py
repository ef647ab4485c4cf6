"""A source's reply, quote, repost, mention and hashtag edges, plus its hashtag co-occurrence and
author–hashtag participation tables, derived from its current records (pandas → Parquet).

Each of the three tables carries a watermark in its Parquet metadata: which normalized parts it was derived
from. A sync with no new part then reads and writes nothing (``up_to_date``); a sync that only appended parts
adds their records to the tables (``relations_delta``); anything else rebuilds them from all parts. Every way
gives the same bytes as a rebuild.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import NamedTuple

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from crawl_assets.lake import Lake
from crawl_assets.lake.tables import EDGES_SCHEMA
from crawl_assets.normalize.edges import author_hashtag, edges_frame, hashtag_cooccurrence, is_superseded
from crawl_assets.pipeline.normalize import TABLE as RECORDS_TABLE
from crawl_assets.pipeline.version import NORMALIZER_VERSION

TABLE = "relation_edges"
SUMMARY_TABLES = ("hashtag_cooccurrence", "author_hashtag")
SUMMARY_BUILDERS = (("hashtag_cooccurrence", hashtag_cooccurrence), ("author_hashtag", author_hashtag))
CURRENT = "current"  # the one part of each relation table
INPUTS_KEY = b"crawl_assets.inputs"  # Parquet metadata: the watermark (``Inputs`` as JSON)


class EdgeView(NamedTuple):
    """The fields of a record that edges and co-occurrence tables read (the same attributes as
    ``Record``, so the CLI's edge code runs on it unchanged); a few hundred bytes instead of a record."""

    key: str
    created_at: datetime
    platform: str
    tenant: str
    author_id: str | None
    reply_to: str | None
    quote_of: str | None
    repost_of: str | None
    mentions: list[str]
    hashtags: list[str]


@dataclass(frozen=True)
class Inputs:
    """What the relation tables were derived from: the first ``parts`` normalized parts (their ids hash to
    ``digest``) of ``version``, and what the tables then held (shown again when nothing changed)."""

    version: str
    parts: int
    digest: str
    records: int
    edges_by_type: dict[str, int] = field(default_factory=dict)
    summary_rows: dict[str, int] = field(default_factory=dict)

    def encode(self) -> bytes:
        return orjson.dumps(asdict(self), option=orjson.OPT_SORT_KEYS)


@dataclass
class Relations:
    """What one refresh of the relation tables did: ``mode`` is ``up_to_date`` (nothing new: nothing read
    or written), ``incremental`` (only the ``new_parts`` were read) or ``full`` (rebuilt from all parts)."""

    mode: str
    inputs: Inputs
    part: str
    new_parts: int


def parts_digest(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()


def latest_views(lake: Lake, tenant: str, platform: str, source: str, parts: Collection[str] | None = None,
                 keys: pa.Array | None = None) -> dict[str, EdgeView | None]:
    """Per key (of ``keys`` when given), its latest observation among ``parts`` (all when None; parts are in
    collection order), None when that is a superseded version of an edited X post (history, not a post)."""
    latest: dict[str, EdgeView | None] = {}
    for _, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source, columns=[*EdgeView._fields, "metadata"],
                                    include=None if parts is None else set(parts).__contains__):
        if keys is not None:
            table = table.filter(pc.is_in(table.column("key"), value_set=keys))
        columns = [table.column(name).to_pylist() for name in EdgeView._fields]
        for row, meta in zip(zip(*columns), table.column("metadata").to_pylist()):
            superseded = bool(meta) and '"superseded_by"' in meta and is_superseded(orjson.loads(meta))
            latest[row[0]] = None if superseded else EdgeView(*row)
    return latest


def current_records(lake: Lake, tenant: str, platform: str, source: str,
                    parts: Collection[str] | None = None) -> list[EdgeView]:
    """The source's records (of ``parts`` when given), one per key, the latest observation winning; only the
    columns edges need are read, so memory stays far below the records' size. A key whose latest observation
    is a superseded version of an edited X post is left out."""
    return [view for view in latest_views(lake, tenant, platform, source, parts).values() if view is not None]


def sorted_edges(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop_duplicates(subset=["type", "src", "dst"]).sort_values(["type", "src", "dst"], kind="stable")


def write_relations(lake: Lake, tenant: str, platform: str, source: str
                    ) -> tuple[list[EdgeView], pd.DataFrame, dict[str, int], str]:
    """The source's edges and summary tables rebuilt from all its current records (also run by an erasure):
    (records, edges, rows per summary table, edges part path)."""
    ids = lake.part_ids(RECORDS_TABLE, tenant, platform, source)
    records, edges, summary_rows, part, _ = rebuild(lake, tenant, platform, source, ids,
                                                    all_current(lake, tenant, platform, source, ids))
    return records, edges, summary_rows, part


def rebuild(lake: Lake, tenant: str, platform: str, source: str, ids: list[str], complete: bool
            ) -> tuple[list[EdgeView], pd.DataFrame, dict[str, int], str, Inputs | None]:
    """``write_relations`` from the parts ``ids``; ``complete``: all of them of this normalizer version.
    Also returns the watermark written (None when incomplete)."""
    records = current_records(lake, tenant, platform, source, ids)
    edges = sorted_edges(edges_frame(records))
    summaries = {name: build(records) for name, build in SUMMARY_BUILDERS}
    # parts of an older normalizer version are about to be re-derived: no watermark, the next sync rebuilds
    inputs = Inputs(NORMALIZER_VERSION, len(ids), parts_digest(ids), len(records)) if complete else None
    inputs, part = write_tables(lake, tenant, platform, source, to_arrow(edges, EDGES_SCHEMA), summaries, inputs)
    return records, edges, {name: len(frame) for name, frame in summaries.items()}, part, inputs


def write_tables(lake: Lake, tenant: str, platform: str, source: str, edges: pa.Table,
                 summaries: dict[str, pd.DataFrame | pa.Table], inputs: Inputs | None) -> tuple[Inputs | None, str]:
    """Write the three tables (summaries as frames or as Arrow tables a frame would give), each stamped with
    the watermark (completed with what they hold); the edges part last. A crash between writes leaves
    watermarks that disagree, so the next sync rebuilds."""
    if inputs is not None:
        by_type = Counter(edges.column("type").to_pylist())
        inputs = Inputs(inputs.version, inputs.parts, inputs.digest, inputs.records, dict(sorted(by_type.items())),
                        {name: len(frame) for name, frame in summaries.items()})
    stamp = {INPUTS_KEY: inputs.encode()} if inputs is not None else {}
    for name, frame in summaries.items():
        table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
        lake.write_part(lake.table_part(name, tenant, platform, source, CURRENT),
                        table.replace_schema_metadata({**(table.schema.metadata or {}), **stamp}),
                        version=NORMALIZER_VERSION)
    part = lake.table_part(TABLE, tenant, platform, source, CURRENT)
    lake.write_part(part, edges.replace_schema_metadata(stamp), version=NORMALIZER_VERSION)
    return inputs, part


def all_current(lake: Lake, tenant: str, platform: str, source: str, ids: list[str]) -> bool:
    """Whether every normalized part was written by the current normalizer (one footer read each)."""
    return all(lake.has_part(lake.table_part(RECORDS_TABLE, tenant, platform, source, i), version=NORMALIZER_VERSION)
               for i in ids)


def read_current(lake: Lake, table: str, tenant: str, platform: str, source: str,
                 columns: list[str] | None = None) -> pa.Table | None:
    """The ``current`` part of a relation table (only ``columns`` when given), or None."""
    for _, found in lake.read_parts(table, tenant, platform, source, columns=columns, include=CURRENT.__eq__):
        return found
    return None


def stored_inputs(lake: Lake, tenant: str, platform: str, source: str) -> Inputs | None:
    """The watermark the three tables agree on (None when one lacks it or they differ)."""
    stamps = set()
    for name in (*SUMMARY_TABLES, TABLE):
        table = read_current(lake, name, tenant, platform, source, columns=[])
        stamps.add(None if table is None else (table.schema.metadata or {}).get(INPUTS_KEY))
    stamp = stamps.pop() if len(stamps) == 1 else None
    return None if stamp is None else Inputs(**orjson.loads(stamp))


def to_arrow(frame: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    cols = {f.name: frame[f.name].tolist() if f.name in frame else [None] * len(frame) for f in schema}
    if "created_at" in cols:
        cols["created_at"] = [None if pd.isna(v) else pd.Timestamp(v).to_pydatetime() for v in cols["created_at"]]
    return pa.table(cols, schema=schema)
