"""No import cycles in the product (issue 33): each one was a concept cut in two or a module reaching back up."""

from __future__ import annotations

import textwrap

from crawl_assets_tests.architecture import cycles


def test_the_product_has_no_import_cycle():
    found = cycles.import_cycles("crawl_assets")
    assert found == [], cycles._explain("crawl_assets", found)


def test_a_cycle_through_a_late_or_type_only_import_is_found(tmp_path, monkeypatch):
    pkg = tmp_path / "cyclic_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from cyclic_pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from cyclic_pkg import c\n")
    (pkg / "c.py").write_text(textwrap.dedent("""\
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from cyclic_pkg.a import X
        """))
    (pkg / "d.py").write_text("from cyclic_pkg import a\n")  # imports into the cycle, not part of it
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cycles.import_cycles("cyclic_pkg") == [["cyclic_pkg.a", "cyclic_pkg.b", "cyclic_pkg.c"]]


def test_groups_are_strongly_connected_sets():
    edges = {"a": {"b"}, "b": {"a", "c"}, "c": {"d"}, "d": {"c"}, "e": {"e"}, "f": set()}
    assert cycles.strongly_connected(edges) == [["a", "b"], ["c", "d"], ["e"]]
