"""``index_backlog_sensor``: once a cluster is configured, index what was synced before there was one.

A sync indexes the parts it normalizes; parts normalized while no cluster was configured stay unindexed, and a
source with nothing new (an unchanged export) never runs its index step again in a batch. Defined only with a
cluster (``CRAWL_ES_URL``), this sensor walks the registry once per cluster (its URL's fingerprint is in the
cursor, never the URL), a slice of sources per tick, and requests an index-only run (``{platform}_sync``,
``search_index`` selected) of each source with parts the index has not accounted for (the lake's index markers,
no part is read). A second cluster (another URL) starts a new walk.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import dagster as dg

from crawl_assets import settings
from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.registry.store import registry_view

NAME = "index_backlog_sensor"
SOURCES_PER_TICK = 500  # index markers listed per tick (one folder listing per source)
TAG = "crawl/index_backlog"


def build_index_backlog_sensor(jobs: Sequence[dg.UnresolvedAssetJobDefinition], cluster_url: str) -> dg.SensorDefinition:
    """The sensor, for the ``{platform}_sync`` jobs (with the index step) of every platform."""
    fingerprint = hashlib.sha256(cluster_url.strip().encode()).hexdigest()[:12]

    @dg.sensor(name=NAME, jobs=list(jobs), minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
               description="Indexes the sources synced before an Elasticsearch cluster was configured: one index-only "
                           "run per source with unindexed parts, once per cluster.")
    def _backlog(context: dg.SensorEvaluationContext, lake: LakeResource, registry: RegistryResource):
        cursor = json.loads(context.cursor or "{}")
        if cursor.get("cluster") == fingerprint and cursor.get("done"):
            return dg.SkipReason("every source synced before this cluster was configured has been requested")
        from crawl_assets.pipeline.index.stage import pending_parts  # it loads the ES client: not at load

        start = cursor.get("next", 0) if cursor.get("cluster") == fingerprint else 0
        reg, _ = registry_view(registry.path or settings.registry_path())
        entries = sorted(reg.entries, key=lambda e: e.key)
        partitions = {p: set(context.instance.get_dynamic_partitions(d.name or "")) for p, d in SOURCE_PARTITIONS.items()}
        the_lake = lake.lake()
        requests = []
        for entry in entries[start:start + SOURCES_PER_TICK]:
            if entry.key not in partitions.get(entry.platform, ()):
                continue  # not a partition yet: the registry sensor adds it, and its first sync indexes it
            _, unindexed = pending_parts(the_lake, entry.tenant, entry.platform, entry.key)
            if unindexed:
                requests.append(dg.RunRequest(
                    job_name=f"{entry.platform}_sync", partition_key=entry.key,
                    asset_selection=[dg.AssetKey([entry.platform, "search_index"])],
                    run_key=f"index-backlog-{fingerprint}-{entry.key}", tags={TAG: "true"}))
        done = start + SOURCES_PER_TICK >= len(entries)
        context.log.info(f"index backlog: {len(requests)} sources to index among "
                         f"{len(entries[start:start + SOURCES_PER_TICK])} looked at" + ("; walk done" if done else ""))
        return dg.SensorResult(run_requests=requests, cursor=json.dumps(
            {"cluster": fingerprint, "next": start + SOURCES_PER_TICK, "done": done}))

    return _backlog
