"""Test tiers and the order tests run in (a pytest plugin of the root conftest).

Every test gets exactly one tier marker, so ``-m unit`` (the quick subset) and ``-m "not system"`` select
by cost and scope:

* ``system``: a whole deployment in one test (daemons, webservers, killed processes, several machines or
  nodes, ``crawl-assets demo`` as a subprocess): the modules listed in ``SYSTEM``;
* ``integration``: real services or real runs: the Elasticsearch node, PostgreSQL, the S3 server, the API's
  world, Dagster jobs, CLI subprocesses (a fixture of ``SERVICES`` or a module of ``INTEGRATION``);
* ``unit``: the rest: plain functions and stand-ins in this process.

A marker written on a test or module wins. Tests run system first, then integration, then unit (modules
kept whole, so module and package fixtures are set up once): under ``pytest-xdist`` the longest tests are
handed out first and the short ones fill the gaps. With ``--dist loadgroup`` the tests of a folder or module
in ``GROUPS`` (those sharing an expensive package, module or per-worker fixture) go to one worker together, so
that fixture is built once; every other test is its own unit (xdist's own ``xdist_group`` suffix is not used:
pytest 9 nodeids cannot carry it). The tests on the second Elasticsearch line (``[es9]``, see
``es_node/fixtures.py``) are one unit, handed out first: one worker starts that node and its worlds once.
"""

from __future__ import annotations

import pytest

TIERS = ("system", "integration", "unit")

# Fixtures that start or use a real service, or a Dagster instance (their tests are at least integration).
SERVICES = frozenset({
    "es_url", "es_cluster", "es_node", "fault_proxy", "pg_url", "s3_server", "s3_env", "s3_lake", "world", "api",
    "demo", "ui_stack", "demo_home", "synced", "dagster_home", "instance", "resources",
})

# Modules (paths under crawl_assets_tests/) that are a whole system in one test.
SYSTEM = frozenset({
    "e2e/test_daemon_e2e.py",
    "faults/test_crash_convergence.py", "faults/test_outages.py", "faults/test_s3_lake_crash.py",
    "faults/test_split_invariance.py",
    "index/test_es_cluster.py",
    "pipeline/test_demo.py",
    "shared/test_two_machines.py", "shared/test_s3_lake_full_run.py", "shared/test_locks_across_machines.py",
    "ui/test_browser.py", "ui/test_partition_status.py", "ui/test_readme_ui.py",
})

# Modules, or tests (``module::name``), that no fixture marks but that start subprocesses (the CLI, a JVM, a
# bench, other workers), build wheels, train a model or fuzz at length: seconds each.
INTEGRATION = frozenset({
    "api/test_keys.py",
    "architecture/test_contracts.py",
    "attacks/test_export_confinement.py",
    "attacks/test_registry_attacks.py::test_a_pause_reason_never_stores_a_secret_nor_breaks_the_registry",
    "cli/test_main.py::test_help_lists_every_command",
    "cli/test_main.py::test_the_definitions_and_the_lake_reader_do_not_load_the_es_client",
    "cli/test_sources_cli.py", "cli/test_ui_interrupt.py",
    "contract/test_dagster_names.py",
    "enrich/test_assets.py", "enrich/test_automation.py",
    "enrich/test_classifier.py::test_the_training_script_reproduces_the_shipped_model",
    "es_node/test_node.py",
    "fuzz/test_normalizers_fuzz.py",
    "normalize/test_fuzz.py",
    "normalize/test_lang_eval.py::test_the_bench_fails_loudly_when_a_baseline_is_missing",
    "orchestration/test_batch_and_scheduler.py",
    "pipeline/test_cli_pipeline_agree.py", "pipeline/test_definitions.py", "pipeline/test_part_processes.py",
    "shared/test_shared_registry.py",
    "test_packaging.py",
})

# Where tests share a fixture worth building once (path prefix -> group): one xdist worker runs them all.
GROUPS = {
    "crawl_assets_tests/api/": "api-world",  # the API's world (package-scoped)
    "crawl_assets_tests/ui/": "ui-stack",  # the demo plus webserver (package-scoped)
    "crawl_assets_tests/erasure/": "erasure-world",  # the synced world and its snapshot (per worker)
    "crawl_assets_tests/faults/test_outages.py": "outages-clean",  # one clean sync per worker's corpus
}


def module_path(item: pytest.Item) -> str:
    """The test's module relative to crawl_assets_tests/ (``api/test_search.py``)."""
    path = item.path.as_posix()
    return path.split("crawl_assets_tests/", 1)[-1]


def listed(item: pytest.Item, names: frozenset[str]) -> bool:
    """The item's module, or the test itself (any of its parameters), is in ``names``."""
    path = module_path(item)
    test = f"{path}::{getattr(item, 'originalname', None) or getattr(item, 'name', '')}"
    return path in names or test in names


def tier_of(item: pytest.Item) -> str:
    written = [name for name in TIERS if item.get_closest_marker(name)]
    if written:
        return written[0]
    if listed(item, SYSTEM):
        return "system"
    if listed(item, INTEGRATION) or item.get_closest_marker("postgres") \
            or SERVICES.intersection(getattr(item, "fixturenames", ())):
        return "integration"
    return "unit"


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        tier = tier_of(item)
        if not item.get_closest_marker(tier):
            item.add_marker(getattr(pytest.mark, tier))


def second_line(nodeid: str) -> bool:
    """The test runs on the second Elasticsearch line (its id holds ``es9``)."""
    from crawl_assets_tests.es_node.fixtures import on_second_line

    return on_second_line(nodeid)


def group_of(nodeid: str) -> str:
    """The work unit of a test under ``--dist loadgroup``: its group, else the test alone."""
    if second_line(nodeid):
        return "second-es-line"
    path = nodeid.split("::", 1)[0]
    return next((group for prefix, group in GROUPS.items() if path.startswith(prefix)), nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # noqa: ANN001, ANN201
    """``--dist loadgroup``: units handed out in run order as workers free up, grouped by ``group_of``."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    config.option.loadscopereorder = False  # keep the run order: longest tiers first
    return GroupScheduling(config, log)


class _Order:
    """The run order, set after the fixtures' own reordering and the deselection by ``-m``/``-k``."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        items[:] = order(items)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Order(), "crawl-tiers-order")


def order(items: list[pytest.Item]) -> list[pytest.Item]:
    """The second Elasticsearch line's tests first (one unit), then system modules, then modules holding
    integration tests, then the rest; each module whole and in its own order, the modules of one tier in
    collection order."""
    rank = {name: i for i, name in enumerate(TIERS)}
    modules: dict[tuple[bool, str], int] = {}

    def key(item: pytest.Item) -> tuple[bool, str]:
        return (not second_line(item.nodeid), module_path(item))

    for item in items:
        tier = next(m.name for m in item.iter_markers() if m.name in rank)
        modules[key(item)] = min(modules.get(key(item), len(TIERS)), rank[tier])
    position = {k: i for i, k in enumerate(modules)}

    def place(item: pytest.Item) -> tuple:
        if not key(item)[0]:  # the second line's: by path, so a package's tests stay together (its world built once)
            return (False, 0, module_path(item))
        return (True, modules[key(item)], position[key(item)])

    return sorted(items, key=place)
