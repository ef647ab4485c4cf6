"""Where a Telegram sync's output goes: raw batches, per-item state and media files in the lake.

* raw batches (format ``telegram``): one per few pages, never overwritten, manifest last;
  ``extra.kind`` says what the batch holds (``forward``, ``backfill``, ``refresh``, or ``chat``: a batch
  with no lines whose ``extra.chat``/``extra.chat_full`` carry the chat's metadata);
* ``state/{tenant}/telegram/{source}/refresh-window.json``: fingerprints of the last refresh window
  (per-item state too big for the cursor; losing it only skips one round of edit/deletion detection);
* ``media/{tenant}/telegram/{source}/{chat}/{message}{ext}``: downloaded files (opt-in), never indexed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from crawl_assets.lake import Lake, RawBatch
from crawl_assets.lake.layout import media_file, state_file
from crawl_assets.registry import SourceEntry
from crawl_assets.sdk.sync import RawBatchWriter

FORMAT = "telegram"
METHOD = "api"


class LakeSink:
    """The ``Sink`` of the sync engine on a lake; ``save_state`` persists a checkpoint (e.g. ``Checkpointer.save``)."""

    def __init__(self, lake: Lake, entry: SourceEntry, run_id: str | None, save_state: Callable[[dict[str, Any]], None]):
        self.lake = lake
        self.entry = entry
        self.writer = RawBatchWriter(lake, entry, run_id, FORMAT, save_state, METHOD)
        self.batches: list[RawBatch] = self.writer.batches

    def write(self, lines: list[bytes], *, kind: str, extra: dict[str, Any]) -> str:
        """A raw batch (also with no lines: a chat-metadata batch carries its data in ``extra``)."""
        return self.writer.write(lines, {"kind": kind, **extra}).path

    def checkpoint(self, state: dict[str, Any]) -> None:
        self.writer.save_state(state)

    def _state_path(self) -> str:
        return state_file(self.entry.tenant, self.entry.platform, self.entry.key, "refresh-window.json")

    def load_window(self) -> dict[int, list[int]]:
        raw = self.lake.read_bytes(self._state_path())
        if raw is None:
            return {}
        data = orjson.loads(raw)
        return {int(k): list(v) for k, v in data.get("window", {}).items()}

    def save_window(self, window: dict[int, list[int]]) -> None:
        payload = {"window": {str(k): v for k, v in window.items()}}
        self.lake.write_bytes(self._state_path(), orjson.dumps(payload), overwrite=True)

    def save_media(self, name: str, data: bytes) -> str:
        relative = media_file(self.entry.tenant, self.entry.platform, self.entry.key, name)
        self.lake.write_bytes(relative, data, overwrite=True)
        return self.lake.url(relative)
