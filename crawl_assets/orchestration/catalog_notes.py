"""How the asset catalog reads for a platform with no registered source.

The source catalog defines every platform's assets whether or not anything uses them (a feature: adding
a source needs no code change). A platform that had no source in the registry when the code location
loaded gets a first line in each of its assets' descriptions saying so and giving the command that
registers one; the asset group stays the platform's name. The note names the moment it was true (the
load), because a source added later appears as a partition within a sensor tick, without a reload.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg

from crawl_assets import settings
from crawl_assets.registry import RegistryFileError
from crawl_assets.registry.store import registry_view
from crawl_assets.core import catalog


def platforms_with_sources() -> set[str] | None:
    """Platforms with at least one valid registry entry now; None when the registry cannot be read."""
    try:
        reg, _ = registry_view(settings.registry_path())
    except (RegistryFileError, OSError):
        return None
    return {e.platform for e in reg.entries}


def empty_platform_note(platform: str) -> str:
    return (f"**No {platform} sources were registered when this code location loaded**: register one with "
            f"`{catalog.spec(platform).register_hint()}` (its partition appears at the registry sensor's next tick).")


def describe_empty_platform(platform: str, assets: Sequence[Any]) -> list[Any]:
    """The platform's assets with the note as the first paragraph of their descriptions."""
    note = empty_platform_note(platform)
    return list(dg.map_asset_specs(lambda spec: spec.replace_attributes(
        description=f"{note}\n\n{spec.description or ''}".rstrip()), assets))
