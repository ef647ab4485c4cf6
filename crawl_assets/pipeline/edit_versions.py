"""Edited X posts across raw batches: the version records an earlier part holds are marked superseded
when a later batch brings a newer version (``crawl_assets.normalize.edits`` resolves within a batch)."""

from __future__ import annotations

from typing import Any

import orjson
import pyarrow.compute as pc

from crawl_assets.core import catalog
from crawl_assets.lake import Lake, RawBatch
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.normalize.edits import FIELD, EditHistories

# the stored metadata text (sorted-key JSON) of a record listing more than one version
_MANY_VERSIONS = r'"edit_history_tweet_ids":\["[0-9]+","'


def resolved(edits: EditHistories, row: dict[str, Any]) -> dict[str, Any]:
    """``row`` as its post's live or superseded version (unchanged when it is not an edited post's)."""
    return (edits.resolve(row) or row) if edits else row


def earlier_versions(lake: Lake, batch: RawBatch, table: str, edits: EditHistories, present: set[str]) -> list[dict[str, Any]]:
    """The last stored observation of every version this batch's histories name but do not hold, from
    earlier parts, resolved (an older version becomes superseded by the newest one): they go into this
    batch's part so the index learns of the edit."""
    wanted = edits.keys() - present if edits else set()
    if not wanted:
        return []
    m = batch.manifest
    earlier = {p for p in lake.part_ids(table, m.tenant, m.platform, m.source) if p < m.batch_id}
    holding = {part_id for part_id, keys in lake.read_parts(table, m.tenant, m.platform, m.source, columns=["key"],
                                                            include=earlier.__contains__)
               if not wanted.isdisjoint(keys.column("key").to_pylist())}  # fmt: skip
    latest: dict[str, dict[str, Any]] = {}
    for _, part in lake.read_parts(table, m.tenant, m.platform, m.source, include=holding.__contains__):
        hits = [i for i, k in enumerate(part.column("key").to_pylist()) if k in wanted]
        for row in arrow_to_records(part.take(hits)) if hits else ():
            latest[row["key"]] = row
    return [resolved(edits, row) for row in latest.values()]


def stored_histories(lake: Lake, batch: RawBatch, table: str) -> dict[str, list[list[str]]]:
    """The histories earlier parts hold listing more than one version, by each version id they list: a version
    this batch reads after its post's newer version was stored (listing only itself) is then resolved as
    superseded too, whichever batch came first. Only the metadata column is read, a record batch at a time,
    rows filtered by a regex (an earlier part is never read whole)."""
    m = batch.manifest
    found: dict[str, list[list[str]]] = {}
    if not catalog.keeps_edit_histories(m.platform):
        return found
    for part_id in lake.part_ids(table, m.tenant, m.platform, m.source):
        if part_id >= m.batch_id:
            continue
        part = lake.table_part(table, m.tenant, m.platform, m.source, part_id)
        for rows in lake.iter_part_batches(part, columns=["metadata"]):
            column = rows.column("metadata")
            for text in column.filter(pc.fill_null(pc.match_substring_regex(column, _MANY_VERSIONS), False)).to_pylist():
                history = orjson.loads(text).get(FIELD)
                if isinstance(history, list):
                    for version in history:
                        found.setdefault(version, []).append(history)
    return found
