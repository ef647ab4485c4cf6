"""One dynamic partitions definition per platform: a partition is a registered source.

Keys come from the registry (``{tenant}.{platform}.{name}``, validated slugs): stable, readable,
free of '/' and of secrets. They are added and retired in bulk by the registry sensor.
"""

from __future__ import annotations

import dagster as dg

from crawl_assets.core.catalog import platforms

SOURCE_PARTITIONS: dict[str, dg.DynamicPartitionsDefinition] = {
    platform: dg.DynamicPartitionsDefinition(name=f"{platform}_sources") for platform in platforms()
}
