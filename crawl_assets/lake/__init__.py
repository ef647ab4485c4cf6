"""The lake: raw observations, derived tables and quarantine under one root."""

from crawl_assets.lake.store import BatchManifest, Lake, RawBatch

__all__ = ["BatchManifest", "Lake", "RawBatch"]
