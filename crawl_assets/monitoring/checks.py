"""Asset checks on each platform's raw asset: are its sources fresh, and is any failing again and again?

Dagster's freshness policies are per asset, not per partition; these checks look at every source of the
platform (health from the instance, in bulk) and list the offenders in their metadata. The
``source_health_checks`` job runs them on a schedule; they can also be executed from the UI.
"""


from collections import Counter

from typing import Any

import dagster as dg

from crawl_assets.monitoring.status import FAILURE_STREAK, source_statuses
from crawl_assets.resources.lake import RegistryResource
from crawl_assets.scheduling.registry_view import registry_view
from crawl_assets import settings

EXAMPLES = 20


def _statuses(context: dg.AssetCheckExecutionContext, registry: RegistryResource, platform: str):
    reg, _ = registry_view(registry.path or settings.registry_path())
    return source_statuses(context.instance, [e for e in reg.entries if e.platform == platform])


def build_health_checks(platform: str, raw: dg.AssetsDefinition) -> list[dg.AssetChecksDefinition]:
    @dg.asset_check(asset=raw, name="sources_fresh", description=(
        f"No active {platform} source is late: due for longer than one more interval of its policy."))
    def _fresh(context: dg.AssetCheckExecutionContext, registry: RegistryResource) -> dg.AssetCheckResult:
        statuses = _statuses(context, registry, platform)
        late = sorted((s for s in statuses if s.state == "late"), key=lambda s: -s.overdue_seconds)
        states = Counter(s.state for s in statuses)
        return dg.AssetCheckResult(
            passed=not late, severity=dg.AssetCheckSeverity.WARN,
            metadata={"sources": len(statuses), "late": len(late), "never_synced": states["never"],
                      "max_overdue_seconds": round(late[0].overdue_seconds, 1) if late else 0.0,
                      **{f"state_{k}": v for k, v in sorted(states.items())},
                      "late_examples": [f"{s.entry.key} (overdue {s.overdue_seconds / 60:.0f} min)" for s in late[:EXAMPLES]]},
        )

    @dg.asset_check(asset=raw, name="no_failure_streaks", description=(
        f"No active {platform} source has failed {FAILURE_STREAK} or more attempts in a row."))
    def _streaks(context: dg.AssetCheckExecutionContext, registry: RegistryResource) -> dg.AssetCheckResult:
        statuses = _statuses(context, registry, platform)
        bad = sorted((s for s in statuses if not s.entry.paused and s.health.failures >= FAILURE_STREAK),
                     key=lambda s: -s.health.failures)
        paused = [s for s in statuses if s.entry.paused]
        return dg.AssetCheckResult(
            passed=not bad,
            metadata={"failing_sources": len(bad), "paused_sources": len(paused),
                      "longest_streak": bad[0].health.failures if bad else 0,
                      "examples": [f"{s.entry.key}: {s.health.failures}x: {s.health.last_error[:160]}" for s in bad[:EXAMPLES]],
                      "paused_examples": [f"{s.entry.key}: {s.entry.status_reason or ''}"[:200] for s in paused[:EXAMPLES]]},
        )

    return [_fresh, _streaks]


def health_check_job_and_schedule(checks: list[dg.AssetChecksDefinition]) -> tuple[Any, dg.ScheduleDefinition]:
    selection = dg.AssetSelection.checks(*checks)
    job = dg.define_asset_job("source_health_checks", selection=selection, executor_def=dg.in_process_executor,
                              description="Evaluate per-source freshness and failure-streak checks of every platform.")
    schedule = dg.ScheduleDefinition(job=job, cron_schedule="*/10 * * * *", default_status=dg.DefaultScheduleStatus.RUNNING,
                                     description="Source health checks every 10 minutes.")
    return job, schedule
