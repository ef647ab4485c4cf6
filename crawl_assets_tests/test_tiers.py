"""Every test gets one tier; the run order puts whole modules of the costlier tiers first; a shared world's
tests are one unit of work for the xdist scheduler."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from crawl_assets_tests import tiers
from crawl_assets_tests.conftest import REPO


@dataclass
class FakeItem:
    """What the tier rules read of a pytest item."""

    module: str  # under crawl_assets_tests/
    fixturenames: tuple[str, ...] = ()
    marks: list[str] = field(default_factory=list)
    originalname: str = "test_something"
    ids: str = ""  # its parameters' ids (``es9``)

    @property
    def nodeid(self) -> str:
        return f"crawl_assets_tests/{self.module}::{self.originalname}" + (f"[{self.ids}]" if self.ids else "")

    @property
    def path(self) -> Path:
        return REPO / "crawl_assets_tests" / self.module

    def get_closest_marker(self, name: str):  # noqa: ANN201
        return pytest.mark.__getattr__(name).mark if name in self.marks else None

    def iter_markers(self):  # noqa: ANN201
        return [pytest.mark.__getattr__(name).mark for name in self.marks]


def test_a_test_is_unit_unless_it_uses_a_service_or_runs_a_system():
    assert tiers.tier_of(FakeItem("normalize/test_x.py", ("tmp_path",))) == "unit"
    assert tiers.tier_of(FakeItem("normalize/test_x.py", ("tmp_path", "es_cluster"))) == "integration"
    assert tiers.tier_of(FakeItem("instance/test_pg.py", ("pg_url",))) == "integration"
    assert tiers.tier_of(FakeItem("normalize/test_x.py", ("dagster_home",))) == "integration"  # a Dagster instance
    assert tiers.tier_of(FakeItem("normalize/test_x.py", marks=["postgres"])) == "integration"
    assert tiers.tier_of(FakeItem("enrich/test_automation.py")) == "integration"  # Dagster runs, no fixture says so
    training = "test_the_training_script_reproduces_the_shipped_model"
    assert tiers.tier_of(FakeItem("enrich/test_classifier.py", originalname=training)) == "integration"
    assert tiers.tier_of(FakeItem("enrich/test_classifier.py", originalname="test_predicts")) == "unit"
    assert tiers.tier_of(FakeItem("shared/test_two_machines.py", ("es_cluster",))) == "system"
    assert tiers.tier_of(FakeItem("normalize/test_x.py", ("es_cluster",), ["unit"])) == "unit", "a written tier wins"


def test_the_lists_name_modules_that_exist():
    root = REPO / "crawl_assets_tests"
    modules = {m.split("::")[0] for m in tiers.SYSTEM | tiers.INTEGRATION}
    assert [m for m in sorted(modules) if not (root / m).is_file()] == []
    tests = [m.split("::") for m in tiers.SYSTEM | tiers.INTEGRATION if "::" in m]
    assert [t for t in tests if f"def {t[1]}(" not in (root / t[0]).read_text()] == []
    assert [p for p in tiers.GROUPS if not (REPO / p).exists()] == []


def test_costlier_tiers_run_first_with_each_module_whole_and_in_its_order():
    items = [FakeItem("a/test_one.py", marks=["unit"]), FakeItem("b/test_two.py", marks=["integration"]),
             FakeItem("a/test_one.py", marks=["integration"]), FakeItem("c/test_three.py", marks=["system"]),
             FakeItem("d/test_four.py", marks=["unit"]), FakeItem("b/test_two.py", marks=["unit"])]
    ordered = tiers.order(items)  # type: ignore[arg-type]
    assert [(i.module, i.marks[0]) for i in ordered] == [
        ("c/test_three.py", "system"),
        ("a/test_one.py", "unit"), ("a/test_one.py", "integration"),  # the module holds an integration test
        ("b/test_two.py", "integration"), ("b/test_two.py", "unit"),
        ("d/test_four.py", "unit"),
    ]


def test_a_shared_worlds_tests_are_one_unit_of_work_and_others_are_alone():
    assert tiers.group_of("crawl_assets_tests/api/test_search.py::test_sorts[x]") == "api-world"
    assert tiers.group_of("crawl_assets_tests/api/test_files.py::test_csv") == "api-world"
    assert tiers.group_of("crawl_assets_tests/apis/test_x.py::test_y") == "crawl_assets_tests/apis/test_x.py::test_y"
    alone = "crawl_assets_tests/index/test_es_sink.py::test_a"
    assert tiers.group_of(alone) == alone


def test_the_second_es_lines_tests_are_one_unit_handed_out_first(monkeypatch):
    monkeypatch.setenv("CRAWL_TEST_ES9_VERSION", "9.2.0")
    monkeypatch.delenv("CRAWL_TEST_ES_VERSION", raising=False)
    monkeypatch.delenv("CRAWL_TEST_ES_URL", raising=False)
    assert tiers.group_of("crawl_assets_tests/api/test_search.py::test_sorts[x-es9]") == "second-es-line"
    assert tiers.group_of("crawl_assets_tests/index/test_es_sink.py::test_a[es9]") == "second-es-line"
    assert tiers.group_of("crawl_assets_tests/api/test_fuzz.py::test_schema[GET /v1/x][es9]") == "second-es-line"
    assert tiers.group_of("crawl_assets_tests/api/test_isolation.py::test_q[es9-x]") == "second-es-line"
    assert tiers.group_of("crawl_assets_tests/api/test_search.py::test_sorts[x-es8]") == "api-world"
    assert tiers.group_of("crawl_assets_tests/index/test_es_sink.py::test_a[es8]") != "second-es-line"
    assert tiers.group_of("crawl_assets_tests/index/test_x.py::test_es9[es8]") != "second-es-line"  # the name's own
    items = [FakeItem("c/test_three.py", marks=["system"]), FakeItem("a/test_one.py", marks=["integration"], ids="es8"),
             FakeItem("b/test_two.py", marks=["integration"], ids="es9"),
             FakeItem("a/test_one.py", marks=["integration"], ids="es9")]
    ordered = tiers.order(items)  # type: ignore[arg-type]
    assert [(i.module, i.ids) for i in ordered] == [
        ("a/test_one.py", "es9"), ("b/test_two.py", "es9"),  # the second line's, by path: a package together
        ("c/test_three.py", ""), ("a/test_one.py", "es8"),
    ]
    monkeypatch.setenv("CRAWL_TEST_ES9_VERSION", "")  # off: an [es9] id is then nobody's line
    assert tiers.group_of("crawl_assets_tests/index/test_es_sink.py::test_a[es9]") != "second-es-line"
