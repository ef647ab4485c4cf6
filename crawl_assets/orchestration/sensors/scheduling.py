"""One scheduling sensor per platform: each tick requests runs for the sources that are due.

A tick reads a bounded slice of the registry (round-robin; the cursor holds only the position), the
slice's sync health and the runs in flight from the instance in bulk (a few queries, not one per
source), lets the pure policy (``crawl_assets.scheduling.policy``) decide, and requests: a single-source
``{platform}_sync`` run for each source that failed last time (retried alone, with step retries), and a
few ``{platform}_sync_batch`` runs carrying the healthy due sources. Knobs come from the environment
(``CRAWL_SCHEDULER_*``, docs/OPERATIONS.md, read by ``crawl_assets.settings`` when the definitions load), so
tests and deployments tune them without code changes.
"""

from __future__ import annotations

import time
from typing import Any

import dagster as dg
import orjson

from crawl_assets.settings import SchedulerSettings, Settings
from crawl_assets.core import catalog
from crawl_assets.orchestration.run_names import BATCH_CONFIG_FIELD, PLATFORM_TAG, batch_op_name
from crawl_assets.orchestration.monitoring.health import load_health
from crawl_assets.orchestration.partitions import SOURCE_PARTITIONS
from crawl_assets.registry import Registry, RegistryFileError, SourceEntry
from crawl_assets.orchestration.resources import RegistryResource
from crawl_assets.scheduling.policy import Plan, plan_tick, window_slice
from crawl_assets.registry.store import registry_view
from crawl_assets.orchestration.monitoring.inflight import in_flight
from crawl_assets.sdk.exports import export_fingerprint



_SORTED: dict[str, tuple[Registry, list[SourceEntry]]] = {}


def _sorted_entries(reg: Registry, platform: str) -> list[SourceEntry]:
    """The platform's entries in key order, computed once per parsed registry (the view is cached)."""
    hit = _SORTED.get(platform)
    if hit is None or hit[0] is not reg:
        hit = (reg, sorted((e for e in reg.entries if e.platform == platform), key=lambda e: e.key))
        _SORTED[platform] = hit
    return hit[1]


def decide(context: dg.SensorEvaluationContext, platform: str, registry_path: str,
           settings: SchedulerSettings, now: float | None = None,
           runs_per_credential: int | None = None) -> tuple[Plan, int, int]:
    """``runs_per_credential``: the cap of runs per credential (``None``: the platform's own)."""
    """(plan, next cursor position, sources examined) for one tick of ``platform``'s scheduler."""
    reg, by_key = registry_view(registry_path)
    entries = _sorted_entries(reg, platform)
    instance = context.instance
    partitions_def = SOURCE_PARTITIONS[platform]
    assert partitions_def.name is not None
    partition_order = list(instance.get_dynamic_partitions(partitions_def.name))
    known = set(partition_order)
    cursor = orjson.loads(context.cursor) if context.cursor else {}
    window, next_pos = window_slice(entries, int(cursor.get("pos", 0)), settings.window)
    window = [e for e in window if e.key in known]  # the registry sensor adds new sources' partitions first
    flight = in_flight(instance, platform, partition_order, by_key)
    health = load_health(instance, [e.key for e in window])
    plan = plan_tick(
        window, health, flight.sources, now=now or time.time(),
        free_slots=settings.max_runs_in_flight - flight.own_runs, settings=settings,
        probe=lambda e: export_fingerprint(e) or None,
        credential_runs=flight.credential_runs,
        max_runs_per_credential=(catalog.spec(platform).max_runs_per_credential if runs_per_credential is None
                                 else runs_per_credential),
    )
    return plan, next_pos, len(window)


def run_requests(plan: Plan, platform: str, single_job: str, batch_job: str) -> list[dg.RunRequest]:
    requests = [
        dg.RunRequest(job_name=single_job, partition_key=key, tags={PLATFORM_TAG: platform, "crawl/scheduled": "retry-alone"})
        for key in plan.singles
    ]
    for batch in plan.batches:
        requests.append(dg.RunRequest(
            job_name=batch_job,
            run_config={"ops": {batch_op_name(platform, not batch_job.endswith("_no_index")): {"config": {BATCH_CONFIG_FIELD: batch}}}},
            tags={PLATFORM_TAG: platform, "crawl/batch_size": str(len(batch))},
        ))
    return requests


def build_scheduling_sensor(platform: str, single_job: Any, batch_job: dg.JobDefinition,
                            config: Settings) -> dg.SensorDefinition:
    """The scheduler of ``platform``: failing sources go to ``single_job``, healthy ones to ``batch_job``;
    its knobs and interval are ``config``'s."""
    registry_default = str(config.registry_path)

    @dg.sensor(
        name=f"{platform}_scheduler",
        jobs=[single_job, batch_job],
        minimum_interval_seconds=config.scheduler_interval_seconds,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"Requests syncs of due {platform} sources: failing ones alone ({single_job.name}), "
        f"healthy ones in batches ({batch_job.name}).",
        required_resource_keys={"registry"},
    )
    def _scheduler(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        started = time.perf_counter()
        resource: RegistryResource = context.resources.registry
        try:
            plan, next_pos, examined = decide(context, platform, resource.path or registry_default,
                                              config.scheduler, runs_per_credential=config.scheduler_runs_per_credential)
        except RegistryFileError as exc:
            return dg.SkipReason(f"registry unreadable, nothing scheduled: {exc}")
        took = time.perf_counter() - started
        message = f"{examined} sources examined in {took:.2f}s: {plan.summary()}"
        cursor = orjson.dumps({"pos": next_pos}).decode()
        if not plan.sources:
            return dg.SensorResult(skip_reason=dg.SkipReason(message), cursor=cursor)
        context.log.info(message)
        return dg.SensorResult(run_requests=run_requests(plan, platform, single_job.name, batch_job.name),
                               cursor=cursor)

    return _scheduler
