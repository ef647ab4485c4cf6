"""The cursor of one Telegram source: small, and only ever describing data already in the lake.

Invariant: every message with ``oldest_id <= id <= newest_id`` that existed when it was read is stored.
The forward increment grows ``newest_id`` upwards, the backfill lowers ``oldest_id`` until the history
(or the horizon) is done. The per-message fingerprints of the refresh window are kept in the lake
(``state/`` area), not here, so the cursor never grows with the data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

VERSION = 1


@dataclass
class Peer:
    """The resolved chat, cached so a sync does not spend a (strictly limited) username resolution."""

    kind: str  # "channel" | "chat"
    id: int
    access_hash: int
    credential: str
    megagroup: bool | None = None  # a channel that is a supergroup; None: not noted yet (a cursor of before)


@dataclass
class SyncState:
    newest_id: int = 0
    oldest_id: int = 0
    history_complete: bool = False
    complete_horizon_days: int | None = None
    newest_date: str | None = None
    meta_at: str | None = None
    linked_chat_id: int | None = None
    forum: bool = False  # a forum supergroup: its messages are in topics (sync.py keeps the topics' titles)
    peer: Peer | None = None
    syncs: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def anchored(self) -> bool:
        return self.newest_id > 0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["v"] = VERSION
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "SyncState":
        """Read a saved cursor; an unknown version or shape starts over (the lake is never overwritten)."""
        if not data or data.get("v") != VERSION:
            return cls()
        peer = data.get("peer")
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "peer"}
        state = cls(**known)
        state.peer = Peer(**peer) if isinstance(peer, dict) else None
        return state

    def horizon_done(self, horizon_days: int | None) -> bool:
        """History is complete for this horizon (a longer horizon than the one completed reopens it)."""
        if not self.history_complete:
            return False
        if self.complete_horizon_days is None:
            return True
        return horizon_days is not None and horizon_days <= self.complete_horizon_days
