"""The code's shape (``rules.py``): each rule with the places still allowed to break it. A listed place that
no longer breaks its rule fails the test too, so fixing one means deleting its line here."""

from __future__ import annotations

import pytest

from crawl_assets_tests.architecture import rules

ALLOWED: dict[str, set[str]] = {
    "long_files": set(),
    "lake_leaks": set(),
    # settings.py reads the environment (and sets what Dagster and child processes read), the instance's
    # database choice included; nothing else does
    "environment_reads": {
        "crawl_assets/settings.py",
    },
    "dagster_private_imports": {
        # Dagster's documented way to plug a storage into dagster.yaml is a ConfigurableClass (dagster._serdes)
        "crawl_assets/instance/storage.py",
        # no public API (Dagster 1.13.27): the run-retry daemon's cursor key (_create_cursor_key), set so its
        # first tick does not warn that it ignores older events
        "crawl_assets/cli/ui.py",
        # no public API writes ASSET_MATERIALIZATION_PLANNED (DagsterEvent, AssetMaterializationPlannedData):
        # context.log_event and report_runless_asset_event take materializations, observations and checks only
        "crawl_assets/orchestration/monitoring/partition_events.py",
        # no public API builds an evaluation's target (AssetCheckEvaluationTargetMaterializationData): a check
        # result a step logs for its partition must name the materialization it checked, or it reads as stale
        "crawl_assets/orchestration/partition_state.py",
        # no public API reads a partitioned check's status per partition (AssetCheckState, its status enum)
        "crawl_assets_tests/orchestration/test_check_isolation.py",
        # arrived with main at 8687087 (staleness of the enrichment assets after a stamp change)
        "crawl_assets_tests/enrich/test_assets.py",
        # no public API evaluates a tick as the daemon does (AutomationTickEvaluationContext, AssetDaemonCursor):
        # dg.evaluate_automation_conditions builds each cursor with a storage query per partition subset
        "crawl_assets_tests/enrich/test_automation.py",
        # no instance setting sets the backfill daemon's loop (a 30 s constant): the end-to-end test's daemon
        # runs it every 2 s
        "crawl_assets_tests/e2e/daemon.py",
    },
    "telethon_private_use": set(),
    # a class name means one thing (issue 33 renamed the last eight)
    "classes_named_twice": set(),
    "renamed_class_imports": set(),
    "deletion_marker_spellings": {"crawl_assets/normalize/build.py"},
    "platform_literals": set(),
    "notes_citing_tests": set(),
}


def _found(rule: str) -> set[str]:
    if rule == "platform_literals":
        from crawl_assets.core import catalog

        return rules.platform_literals(set(catalog.platforms()), set(catalog.catalog().formats()))
    return getattr(rules, rule)()


@pytest.mark.parametrize("rule", sorted(ALLOWED))
def test_only_allowed_places_break_the_rule(rule):
    found = _found(rule)
    assert found - ALLOWED[rule] == set(), f"new places breaking {rule} ({rules.__doc__.split('.')[0]})"
    assert ALLOWED[rule] - found == set(), f"fixed: delete these from ALLOWED[{rule!r}]"
