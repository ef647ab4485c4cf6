"""The code's shape (``rules.py``): each rule with the places still allowed to break it. A listed place that
no longer breaks its rule fails the test too, so fixing one means deleting its line here."""

from __future__ import annotations

import pytest

from crawl_assets_tests.architecture import rules

ALLOWED: dict[str, set[str]] = {
    "long_files": {
        "crawl_assets/index/sink.py",
        "crawl_assets_tests/standins/telegram_mtproto.py",
        "crawl_assets_tests/standins/x_api.py",
    },
    "lake_leaks": {
        # arrived with main at 2763c5c (erasure of a tenant named under the earlier rule)
        "crawl_assets/cli/erase.py: .fs",
        "crawl_assets/cli/erase.py: area path",
        "crawl_assets/erasure/legacy.py: .fs",
        "crawl_assets/erasure/legacy.py: area path",
        "crawl_assets/erasure/deadletters.py: .fs",
        "crawl_assets/erasure/deadletters.py: area path",
        "crawl_assets/erasure/lake.py: .fs",
        "crawl_assets/erasure/lake.py: area path",
        "crawl_assets/erasure/landing.py: .fs",
        "crawl_assets/erasure/log.py: .fs",
        "crawl_assets/erasure/log.py: area path",
        "crawl_assets/index/deadletter.py: .fs",
        "crawl_assets/index/deadletter.py: area path",
        "crawl_assets/retention/enforce.py: .fs",
        "crawl_assets/retention/enforce.py: area path",
        # arrived with main at 8687087 (issue 21: the features/ lake area, erasure of features)
        "crawl_assets/enrich/index.py: .fs",
        "crawl_assets/enrich/store.py: .fs",
        "crawl_assets/erasure/features.py: .fs",
    },
    # settings.py reads the environment once per entry; instance_db.py resolves the instance's database from it
    # for instance_storage.py, named by dagster.yaml (Dagster builds it, not our entry points), and for the
    # API's key store (main moved it there at f31bb3d)
    "environment_reads": {
        "crawl_assets/settings.py",
        "crawl_assets/instance_db.py",
        "crawl_assets/cli/demo.py",
        "crawl_assets/cli/erase.py",
        "crawl_assets/cli/sources.py",
        "crawl_assets/cli/status.py",
        "crawl_assets/cli/ui.py",
        "crawl_assets/retention/policy.py",
        "crawl_assets/sensors/registry_sensor.py",
        "crawl_assets/sensors/scheduling.py",
        "crawl_assets/sources/play/resource.py",
        "crawl_assets/sources/rest_resource.py",
        "crawl_assets/sources/telegram/login.py",
        "crawl_assets/sources/telegram/resource.py",
        "crawl_assets/sources/tenant_secrets.py",
        "crawl_assets/sources/x/resource.py",
        "crawl_assets/webhooks/app.py",
        # arrived with main at 8687087 (enrichment.yaml) and f31bb3d (the API server and its CLI)
        "crawl_assets/enrich/config.py",
        "crawl_assets/api/server.py",
        "crawl_assets/cli/api.py",
    },
    "dagster_private_imports": {
        # Dagster's documented way to plug a storage into dagster.yaml is a ConfigurableClass (dagster._serdes)
        "crawl_assets/instance_storage.py",
        "crawl_assets/cli/ui.py",
        "crawl_assets/monitoring/partition_events.py",
        # arrived with main at 8687087 (staleness of the enrichment assets after a stamp change)
        "crawl_assets_tests/enrich/test_assets.py",
    },
    "telethon_private_use": {
        "crawl_assets/sources/telegram/client.py: ._call",
        "crawl_assets/sources/telegram/client.py: ._log",
        "crawl_assets/sources/telegram/client.py: ._self_id",
        "crawl_assets/sources/telegram/client.py: ._sender",
        "crawl_assets/sources/telegram/client.py: def _call",
        "crawl_assets/sources/telegram/login.py: ._sender",
        "crawl_assets/sources/telegram/resource.py: ._self_id",
        "crawl_assets/sources/telegram/resource.py: sender_factory",
    },
    "platform_literals": set(),
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
