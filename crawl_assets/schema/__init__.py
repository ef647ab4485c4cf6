"""The public record/edge contract (see docs/SCHEMA.md)."""

from crawl_assets.schema.record import (
    PLATFORMS,
    Edge,
    Media,
    Metrics,
    Provenance,
    Record,
    Rejection,
    record_json_schema,
    snippet_of,
)

__all__ = [
    "PLATFORMS",
    "Edge",
    "Media",
    "Metrics",
    "Provenance",
    "Record",
    "Rejection",
    "record_json_schema",
    "snippet_of",
]
