"""Keep each platform's partitions equal to the registry: add new sources, retire removed ones.

All changes of a tick go out as one bulk request per platform and kind of change (adding keys one by
one costs ~4-12 ms each). When the registry has invalid entries nothing is retired that tick: a
typo must not make a source's partition, and its history in the UI, disappear.
"""

from __future__ import annotations

import hashlib

import dagster as dg

from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
from crawl_assets import settings
from crawl_assets.registry import Registry, RegistryFileError
from crawl_assets.orchestration.resources import RegistryResource
from crawl_assets.registry.store import registry_view


def partition_changes(
    registry: Registry, current: dict[str, set[str]]
) -> tuple[list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest], dict[str, int]]:
    """Requests that make the partitions match the registry, and counts for the tick's log."""
    requests: list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest] = []
    counts = {"added": 0, "retired": 0}
    for platform, partitions_def in SOURCE_PARTITIONS.items():
        assert partitions_def.name is not None
        wanted = {e.key for e in registry.for_platform(platform)}
        have = current.get(partitions_def.name, set())
        add = sorted(wanted - have)
        retire = sorted(have - wanted) if not registry.errors else []
        if add:
            requests.append(partitions_def.build_add_request(add))
            counts["added"] += len(add)
        if retire:
            requests.append(partitions_def.build_delete_request(retire))
            counts["retired"] += len(retire)
    return requests, counts


def build_registry_sensor(interval_seconds: int = 30) -> dg.SensorDefinition:
    """``registry_partitions_sensor``, ticking every ``interval_seconds`` (``CRAWL_REGISTRY_SENSOR_INTERVAL_SECONDS``)."""
    return dg.sensor(
        name="registry_partitions_sensor",
        minimum_interval_seconds=interval_seconds,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Syncs the source registry file into the per-platform source partitions.",
    )(sync_registry_partitions)


def sync_registry_partitions(context: dg.SensorEvaluationContext, registry: RegistryResource) -> dg.SensorResult | dg.SkipReason:
    """One tick of the registry sensor."""
    try:
        reg, _ = registry_view(registry.path or settings.registry_path())  # cached, libyaml: 10,000 entries in ~1-5 s cold
    except RegistryFileError as exc:
        return dg.SkipReason(f"registry unreadable, partitions left as they are: {exc}")
    for err in reg.errors:
        context.log.error(f"invalid registry entry (skipped, nothing retired this tick): {err}")
    current = {
        d.name: set(context.instance.get_dynamic_partitions(d.name))
        for d in SOURCE_PARTITIONS.values()
        if d.name is not None
    }
    requests, counts = partition_changes(reg, current)
    digest = hashlib.sha256("\n".join(sorted(e.key for e in reg.entries)).encode()).hexdigest()[:16]
    if not requests:
        return dg.SkipReason(f"partitions match the registry ({len(reg.entries)} sources, {len(reg.errors)} invalid)")
    context.log.info(f"registry sync: {counts['added']} added, {counts['retired']} retired")
    return dg.SensorResult(dynamic_partitions_requests=requests, cursor=digest)
