"""The source registry: a YAML file users edit, validated with pydantic."""

from crawl_assets.registry.models import SourceEntry, SourceKind, SourceStatus, SyncPolicy
from crawl_assets.registry.store import (EntryError, Registry, RegistryConflict, RegistryFileError, load_registry,
                                         update_registry)

__all__ = [
    "EntryError",
    "Registry",
    "RegistryConflict",
    "RegistryFileError",
    "SourceEntry",
    "SourceKind",
    "SourceStatus",
    "SyncPolicy",
    "load_registry",
    "update_registry",
]
