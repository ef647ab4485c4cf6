"""Asset checks on each platform's sources: are they fresh, and is any failing again and again?

Dagster's freshness policies are per asset, not per partition; these checks look at every source of the
platform (health from the instance, in bulk) and list the offenders in their metadata. The
``source_health_checks`` job runs them on a schedule; they can also be executed from the UI.

They belong to ``{platform}/sources``, an asset standing for the platform's registered sources (the
registry; never materialized), not to the raw asset: the UI reads a check as evaluated only for its
asset's latest materialization, and the raw asset materializes at every sync, so checks on it read as
"not evaluated" (shown as "0 / 2 Passed") between two scheduled evaluations.
"""


from collections import Counter
from collections.abc import Iterator
from typing import Any

import dagster as dg

from crawl_assets.orchestration.monitoring.status import FAILURE_STREAK, source_statuses
from crawl_assets.orchestration.resources import RegistryResource
from crawl_assets.registry.store import registry_view
from crawl_assets import settings

EXAMPLES = 20


def _statuses(context: dg.AssetCheckExecutionContext, registry: RegistryResource, platform: str) -> list:
    reg, _ = registry_view(registry.path or settings.registry_path())
    return source_statuses(context.instance, [e for e in reg.entries if e.platform == platform])


def sources_asset(platform: str) -> dg.AssetSpec:
    """``{platform}/sources``: the platform's registered sources, where their health checks live."""
    return dg.AssetSpec(
        [platform, "sources"], group_name=platform, kinds={"yaml"},
        description=f"The registered {platform} sources (the registry file; each is a partition of the "
        f"{platform} assets). Not materialized: it carries the checks of their sync health, evaluated every "
        "10 minutes; `crawl-assets status` lists each source.")


def build_health_checks(platform: str, sources: dg.AssetSpec) -> list[dg.AssetChecksDefinition]:
    """``sources_fresh`` and ``no_failure_streaks`` on ``{platform}/sources``, in one step. A platform with
    no registered source has nothing to check: the step yields no result, so Dagster records both checks
    as *skipped* rather than passed (an empty platform is not a healthy one)."""
    fresh = dg.AssetCheckSpec("sources_fresh", asset=sources.key, description=(
        f"No active {platform} source is late: due for longer than one more interval of its policy."))
    streaks = dg.AssetCheckSpec("no_failure_streaks", asset=sources.key, description=(
        f"No active {platform} source has failed {FAILURE_STREAK} or more attempts in a row."))

    @dg.multi_asset_check(name=f"{platform}_source_health", specs=[fresh, streaks], can_subset=True,
                          required_resource_keys={"registry"},
                          description=f"Freshness and failure streaks of every {platform} source.")
    def _health(context: dg.AssetCheckExecutionContext) -> Iterator[dg.AssetCheckResult]:
        statuses = _statuses(context, context.resources.registry, platform)
        if not statuses:
            context.log.info(f"no {platform} sources registered yet: nothing to check "
                             f"(add one: crawl-assets sources add --platform {platform} ...)")
            return
        selected = {key.name for key in context.selected_asset_check_keys}
        if fresh.name in selected:
            yield _fresh(statuses)
        if streaks.name in selected:
            yield _streaks(statuses)

    return [_health]


def _fresh(statuses: list) -> dg.AssetCheckResult:
    late = sorted((s for s in statuses if s.state == "late"), key=lambda s: -s.overdue_seconds)
    states = Counter(s.state for s in statuses)
    return dg.AssetCheckResult(
        check_name="sources_fresh", passed=not late, severity=dg.AssetCheckSeverity.WARN,
        metadata={"sources": len(statuses), "late": len(late), "never_synced": states["never"],
                  "max_overdue_seconds": round(late[0].overdue_seconds, 1) if late else 0.0,
                  **{f"state_{k}": v for k, v in sorted(states.items())},
                  "late_examples": [f"{s.entry.key} (overdue {s.overdue_seconds / 60:.0f} min)" for s in late[:EXAMPLES]]},
    )


def _streaks(statuses: list) -> dg.AssetCheckResult:
    bad = sorted((s for s in statuses if not s.entry.paused and s.health.failures >= FAILURE_STREAK),
                 key=lambda s: -s.health.failures)
    paused = [s for s in statuses if s.entry.paused]
    return dg.AssetCheckResult(
        check_name="no_failure_streaks", passed=not bad,
        metadata={"failing_sources": len(bad), "paused_sources": len(paused),
                  "longest_streak": bad[0].health.failures if bad else 0,
                  "examples": [f"{s.entry.key}: {s.health.failures}x: {s.health.last_error[:160]}" for s in bad[:EXAMPLES]],
                  "paused_examples": [f"{s.entry.key}: {s.entry.status_reason or ''}"[:200] for s in paused[:EXAMPLES]]},
    )


def health_check_job_and_schedule(checks: list[dg.AssetChecksDefinition]) -> tuple[Any, dg.ScheduleDefinition]:
    selection = dg.AssetSelection.checks(*checks)
    job = dg.define_asset_job("source_health_checks", selection=selection, executor_def=dg.in_process_executor,
                              description="Evaluate per-source freshness and failure-streak checks of every platform.")
    schedule = dg.ScheduleDefinition(job=job, cron_schedule="*/10 * * * *", default_status=dg.DefaultScheduleStatus.RUNNING,
                                     description="Source health checks every 10 minutes.")
    return job, schedule
