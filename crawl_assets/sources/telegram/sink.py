"""Where a Telegram sync's output goes: raw batches, per-item state and media files in the lake.

* raw batches (format ``telegram``): one per few pages, never overwritten, manifest last;
  ``extra.kind`` says what the batch holds (``forward``, ``backfill``, ``refresh``, or ``chat``: a batch
  with no lines whose ``extra.chat``/``extra.chat_full`` carry the chat's metadata);
* ``state/{tenant}/telegram/{source}/refresh-window.json``: fingerprints of the last refresh window
  (per-item state too big for the cursor; losing it only skips one round of edit/deletion detection);
* ``state/{tenant}/telegram/{source}/topics.json``: a forum's topic titles (``{topic: [title, as of message]}``;
  losing it only costs asking for the titles again);
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

    def _state_path(self, name: str = "refresh-window.json") -> str:
        return state_file(self.entry.tenant, self.entry.platform, self.entry.key, name)

    def _load(self, name: str, field: str) -> dict[int, list[Any]]:
        raw = self.lake.read_bytes(self._state_path(name))
        if raw is None:
            return {}
        data = orjson.loads(raw)
        return {int(k): list(v) for k, v in data.get(field, {}).items()}

    def _save(self, name: str, field: str, values: dict[int, list[Any]]) -> None:
        payload = {field: {str(k): v for k, v in values.items()}}
        self.lake.write_bytes(self._state_path(name), orjson.dumps(payload), overwrite=True)

    def load_window(self) -> dict[int, list[int]]:
        return self._load("refresh-window.json", "window")

    def save_window(self, window: dict[int, list[int]]) -> None:
        self._save("refresh-window.json", "window", window)

    def load_topics(self) -> dict[int, list[Any]]:
        return self._load("topics.json", "topics")

    def save_topics(self, topics: dict[int, list[Any]]) -> None:
        self._save("topics.json", "topics", topics)

    def save_media(self, name: str, data: bytes) -> str:
        relative = media_file(self.entry.tenant, self.entry.platform, self.entry.key, name)
        self.lake.write_bytes(relative, data, overwrite=True)
        return self.lake.url(relative)
