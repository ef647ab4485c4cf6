"""What one Telegram sync may spend (``RunLimits``); a source's registry options are ``spec.TelegramOptions``."""

from __future__ import annotations

from dataclasses import dataclass

PAGE = 100  # Telegram returns at most 100 messages per history request


@dataclass(frozen=True)
class RunLimits:
    """What one run may spend on a source; the rest waits for the next run."""

    max_pages: int = 200
    max_messages: int = 20_000
    pages_per_batch: int = 5

    @property
    def batch_size(self) -> int:
        return max(1, self.pages_per_batch) * PAGE
