"""Every name a Dagster instance keeps history under, read from the one ``Definitions`` object.

Asset keys (and the checkpoint observations, materializations and partitions stored under them), check
names, partitions definitions, pools, op and job names (queued runs' config names the batch op), sensor
and schedule names (their cursors and ticks), resource keys. Renaming any of them silently drops history
or restarts syncs from scratch, so ``test_dagster_names.py`` compares them with ``dagster_names.json``.

Run as a script (``python -m crawl_assets_tests.contract.dagster_names``) it prints the inventory of the
definitions the current environment loads.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def inventory() -> dict[str, Any]:
    from crawl_assets.definitions import defs

    graph = defs.resolve_asset_graph()
    assets: dict[str, Any] = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        executable = node.assets_def.is_executable
        assets[key.to_user_string()] = {
            "deps": sorted(k.to_user_string() for k in node.parent_keys),
            "partitions": getattr(node.partitions_def, "name", None),
            "group": node.group_name,
            "kinds": sorted(node.kinds),
            "checks": sorted(c.name for c in node.check_keys),
            "pools": sorted(node.pools or []),
            "op": node.assets_def.op.name if executable else None,
            "retry": repr(node.assets_def.op.retry_policy) if executable else None,
        }
    jobs = {}
    for job in sorted(defs.resolve_all_job_defs(), key=lambda j: j.name):
        jobs[job.name] = {
            "ops": sorted(n.name for n in job.graph.node_defs),
            "tags": dict(job.tags),
            "executor": job.executor_def.name,
            "op_config": {n.name: sorted(n.config_schema.config_type.fields) for n in job.graph.node_defs
                          if n.config_schema and hasattr(n.config_schema.config_type, "fields")},
        }
    return {
        "assets": assets,
        "jobs": jobs,
        "sensors": {s.name: {"interval": s.minimum_interval_seconds, "status": s.default_status.value,
                             "jobs": sorted(t.job_name for t in s.targets)} for s in defs.sensors},
        "schedules": {s.name: {"cron": s.cron_schedule, "job": s.job_name, "status": s.default_status.value}
                      for s in defs.schedules},
        "resources": sorted(defs.resources),
    }


if __name__ == "__main__":
    json.dump(inventory(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
