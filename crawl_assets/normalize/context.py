"""What a normalizer needs to know about the batch it reads (not in the raw data itself)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class NormalizeContext:
    """Who the records belong to and where the raw batch came from (becomes ``provenance``)."""

    tenant: str = "default"
    source: str = "cli"
    collected_at: datetime | None = None
    method: str = "export"
    run_id: str | None = None
    raw_pointer: str | None = None
    first_line: int = 1  # line number of the stream's first line, when it is a chunk of a larger file
