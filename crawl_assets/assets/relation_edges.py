"""``relation_edges``: reply, quote, repost, mention and hashtag edges of a source, plus its
hashtag co-occurrence and author–hashtag participation tables (pandas → Parquet)."""


from datetime import datetime
from typing import NamedTuple

import dagster as dg
import orjson
import pandas as pd
import pyarrow as pa

from crawl_assets.assets.normalized_records import TABLE as RECORDS_TABLE
from crawl_assets.assets.normalized_records import split_source_key
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import EDGES_SCHEMA
from crawl_assets.assets.deriver_version import NORMALIZER_VERSION
from crawl_assets.normalize.edges import author_hashtag, edges_frame, hashtag_cooccurrence, is_superseded
from crawl_assets.partitions import SOURCE_PARTITIONS
from crawl_assets.resources.lake import LakeResource

TABLE = "relation_edges"
SUMMARY_TABLES = ("hashtag_cooccurrence", "author_hashtag")


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


def current_records(lake: Lake, tenant: str, platform: str, source: str) -> list[EdgeView]:
    """The source's records, one per key, the latest observation winning (parts are in collection
    order); only the columns edges need are read, so memory stays far below the records' size. A key whose
    latest observation is a superseded version of an edited X post is left out (history, not a post)."""
    latest: dict[str, EdgeView] = {}
    for _, table in lake.read_parts(RECORDS_TABLE, tenant, platform, source,
                                    columns=[*EdgeView._fields, "metadata"]):
        columns = [table.column(name).to_pylist() for name in EdgeView._fields]
        for row, meta in zip(zip(*columns), table.column("metadata").to_pylist()):
            if meta and '"superseded_by"' in meta and is_superseded(orjson.loads(meta)):
                latest.pop(row[0], None)
            else:
                latest[row[0]] = EdgeView(*row)
    return list(latest.values())


def write_relations(lake: Lake, tenant: str, platform: str, source: str
                    ) -> tuple[list[EdgeView], pd.DataFrame, dict[str, int], str]:
    """The source's edges and summary tables rebuilt from its current records (the asset's work, also
    run by an erasure): (records, edges, rows per summary table, edges part path)."""
    records = current_records(lake, tenant, platform, source)
    edges = edges_frame(records)
    edges = edges.drop_duplicates(subset=["type", "src", "dst"]).sort_values(["type", "src", "dst"], kind="stable")
    part = lake.table_part(TABLE, tenant, platform, source, "current")
    lake.write_part(part, _to_arrow(edges, EDGES_SCHEMA), version=NORMALIZER_VERSION)
    summary_rows = {}
    for name, build in (("hashtag_cooccurrence", hashtag_cooccurrence), ("author_hashtag", author_hashtag)):
        frame = build(records)
        summary_rows[name] = len(frame)
        lake.write_part(lake.table_part(name, tenant, platform, source, "current"),
                        pa.Table.from_pandas(frame, preserve_index=False), version=NORMALIZER_VERSION)
    return records, edges, summary_rows, part


def build_relation_edges(platform: str, normalized: dg.AssetsDefinition) -> dg.AssetsDefinition:
    key = dg.AssetKey([platform, TABLE])

    @dg.asset(
        key=key,
        deps=[normalized],
        partitions_def=SOURCE_PARTITIONS[platform],
        group_name=platform,
        kinds={"pandas", "parquet"},
        description=f"Relations between {platform} records (reply, quote, repost, mention, hashtag) and "
        "co-occurrence tables, for one source.",
        check_specs=[
            dg.AssetCheckSpec("edge_sources_exist", asset=key, blocking=True,
                              description="Every edge starts at a record of this source."),
        ],
    )
    def _edges(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
        the_lake = lake.lake()
        source = context.partition_key
        tenant, _ = split_source_key(source)
        records, edges, summary_rows, part = write_relations(the_lake, tenant, platform, source)
        keys = {r.key for r in records}
        orphans = sorted(set(edges["src"]) - keys)
        by_type = edges["type"].value_counts().to_dict() if len(edges) else {}
        return dg.MaterializeResult(
            metadata={
                "edges": len(edges),
                **{f"edges_{t}": int(n) for t, n in sorted(by_type.items())},
                **{f"{name}_rows": n for name, n in summary_rows.items()},
                "records": len(records),
                "path": dg.MetadataValue.path(the_lake.url(part)),
            },
            check_results=[
                dg.AssetCheckResult(
                    check_name="edge_sources_exist", passed=not orphans,
                    metadata={"orphan_sources": len(orphans), "examples": orphans[:10]},
                )
            ],
        )

    return _edges


def _to_arrow(frame: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    cols = {f.name: frame[f.name].tolist() if f.name in frame else [None] * len(frame) for f in schema}
    if "created_at" in cols:
        cols["created_at"] = [None if pd.isna(v) else pd.Timestamp(v).to_pydatetime() for v in cols["created_at"]]
    return pa.table(cols, schema=schema)
