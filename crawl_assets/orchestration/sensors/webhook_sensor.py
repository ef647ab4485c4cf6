"""Turn landed webhook events into sync runs of the source they belong to.

Each tick reads the events landed since the cursor (the last event id handled), groups them by source,
and asks for one ``{platform}_sync`` run per source whose registry entry is active and live (pings and
events of removed, paused or export-file sources are skipped and logged). The run key names the newest
event, so a tick evaluated twice never starts the same run twice; many events for one source between
ticks cost one run. The run then pulls the source through its API cursor (the push is the signal; the
API answer is the authoritative observation) while the event itself stays in ``landing/`` as raw data.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import dagster as dg

from crawl_assets.lake.landing import LandedEvent, landed_events, read_event
from crawl_assets.registry import RegistryFileError, SourceKind
from crawl_assets.orchestration.resources import LakeResource, RegistryResource
from crawl_assets.core import catalog

MAX_EVENTS_PER_TICK = 5000


def _topic(lake_res: LakeResource, event: LandedEvent) -> str:
    crawl = read_event(lake_res.lake(), event).get("crawl")
    return str(crawl.get("topic") or "") if isinstance(crawl, dict) else ""


def build_webhook_sensor(jobs: Mapping[str, Any]) -> dg.SensorDefinition:
    """The sensor, targeting ``jobs`` (platform → its single-source sync job, e.g. ``intercom_sync``)."""

    @dg.sensor(
        name="webhook_events_sensor",
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.RUNNING,
        jobs=list(jobs.values()),
        description="Starts a sync run of each source that received webhook events since the last tick.",
    )
    def webhook_events_sensor(context: dg.SensorEvaluationContext, lake: LakeResource,
                              registry: RegistryResource) -> dg.SensorResult | dg.SkipReason:
        return webhook_run_requests(context, lake, registry, {p: job.name for p, job in jobs.items()})

    return webhook_events_sensor


def webhook_run_requests(context: dg.SensorEvaluationContext, lake: LakeResource, registry: RegistryResource,
                         job_names: Mapping[str, str]) -> dg.SensorResult | dg.SkipReason:
    """One tick: events since the cursor → one run request per live source; the cursor moves past them."""
    events = landed_events(lake.lake(), after=context.cursor or "", limit=MAX_EVENTS_PER_TICK)
    if not events:
        return dg.SkipReason("no new webhook events")
    try:
        sources = registry.load().by_key()
    except RegistryFileError as exc:
        return dg.SkipReason(f"registry unreadable, events kept for the next tick: {exc}")
    by_source: dict[str, list[LandedEvent]] = defaultdict(list)
    for event in events:
        by_source[event.source].append(event)
    requests: list[dg.RunRequest] = []
    for key, group in by_source.items():
        entry = sources.get(key)
        if entry is None or entry.paused or entry.kind is SourceKind.export_file or entry.platform != group[0].platform \
                or entry.tenant != group[0].tenant or entry.platform not in job_names:
            context.log.warning(f"{len(group)} webhook events for {key!r} skipped: source not registered, paused, "
                                "of another tenant/platform, or not a live source")
            continue
        topics = [t for t in (_topic(lake, e) for e in group[-20:]) if t]
        hook = catalog.spec(entry.platform).webhook
        ignored = hook.ignored_topics if hook is not None else frozenset()
        if topics and all(t in ignored for t in topics) and len(topics) == len(group):
            continue
        newest = group[-1].event_id
        requests.append(dg.RunRequest(
            run_key=f"webhook:{key}:{newest}",
            job_name=job_names[entry.platform],
            partition_key=key,
            tags={"crawl/trigger": "webhook", "crawl/webhook_events": str(len(group)), "crawl/tenant": entry.tenant},
        ))
    context.log.info(f"{len(events)} webhook events → {len(requests)} sync runs")
    return dg.SensorResult(run_requests=requests, cursor=events[-1].event_id)
