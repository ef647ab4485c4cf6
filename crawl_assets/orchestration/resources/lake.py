"""The lake and the registry as resources, so assets never read paths from globals."""

from __future__ import annotations

import dagster as dg

from crawl_assets import settings
from crawl_assets.lake import Lake
from crawl_assets.registry import Registry, load_registry


class LakeResource(dg.ConfigurableResource):
    """Lake root; empty means ``CRAWL_LAKE`` or ``$DAGSTER_HOME/lake``."""

    root: str = ""

    def lake(self) -> Lake:
        return Lake(self.root or settings.lake_root())


class RegistryResource(dg.ConfigurableResource):
    """Registry file; empty means ``CRAWL_REGISTRY`` or ``$DAGSTER_HOME/sources.yaml``."""

    path: str = ""

    def load(self) -> Registry:
        return load_registry(self.path or settings.registry_path())
