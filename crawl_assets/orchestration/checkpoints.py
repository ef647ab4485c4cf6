"""Per-source sync state kept with the raw asset in the Dagster instance.

The checkpoint (progress inside a run) and the cursor (state between runs) are one small JSON
document, saved as an ``AssetObservation`` of the raw asset's partition. An observation is
persisted at once, so a run killed at any point resumes from the last one saved; and it lives in
the instance (SQLite or Postgres), not in the sensor cursor, which is only a scheduling aid.

Collectors save only after the data it covers is committed to the lake, so a checkpoint never
points past data that could be lost.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
import orjson

CHECKPOINT_KEY = "checkpoint"
MAX_BYTES = 16_384  # cursors must stay small: per-item state belongs in the lake
PAGE = 10  # observations read per query while looking for the newest checkpoint


def load_checkpoint(instance: dg.DagsterInstance, asset_key: dg.AssetKey, partition: str) -> dict[str, Any]:
    """The newest saved state of a source, or ``{}`` when it was never synced.

    Other observations of the partition (a failed sync's reason, ``monitoring.partition_events``) are
    skipped: the newest observation that carries a checkpoint wins."""
    records_filter = dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition])
    cursor = None
    while True:
        page = instance.fetch_observations(records_filter, limit=PAGE, cursor=cursor)
        for record in page.records:
            obs = record.asset_observation
            if obs is not None and CHECKPOINT_KEY in obs.metadata:
                value = obs.metadata[CHECKPOINT_KEY].value
                return dict(value) if isinstance(value, dict) else {}
        if not page.has_more:
            return {}
        cursor = page.cursor


class ObservationCheckpointer:
    """Load and save the state of the partition a raw asset is materializing: the ``crawl_assets.sdk.sync.Checkpointer``
    the raw step gives a live collector."""

    def __init__(self, context: dg.AssetExecutionContext):
        self._context = context
        self.asset_key = context.asset_key
        self.partition = context.partition_key
        self.saves = 0

    def load(self) -> dict[str, Any]:
        return load_checkpoint(self._context.instance, self.asset_key, self.partition)

    def save(self, state: dict[str, Any], **metadata: Any) -> None:
        """Persist ``state`` now. Call only after the data it covers is in the lake."""
        size = len(orjson.dumps(state))
        if size > MAX_BYTES:
            raise ValueError(f"checkpoint of {self.partition} is {size} bytes; keep it under {MAX_BYTES}")
        self._context.log_event(
            dg.AssetObservation(
                asset_key=self.asset_key,
                partition=self.partition,
                metadata={CHECKPOINT_KEY: dg.MetadataValue.json(state), **metadata},
            )
        )
        self.saves += 1
