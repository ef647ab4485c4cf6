"""Versions are declared and bumped when output changes, never derived from source bytes: the normalizer's
and each enricher's output digests on every format's seeds are recorded beside their versions
(``versions.json``), and a source edit that changes no output changes no stamp."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from crawl_assets.enrich.config import ENRICHERS
from crawl_assets_tests.golden import versions

BUMP = "bump the declared version, then record it: python -m crawl_assets_tests.golden.versions --update"


@pytest.fixture(scope="module")
def now() -> dict:
    return versions.current()


def test_the_normalizers_output_changes_only_with_its_version(now):
    was, today = versions.recorded()["normalizer"], now["normalizer"]
    assert today["version"] == was["version"], f"the normalizer's version moved without its digests: {BUMP}"
    changed = sorted(fmt for fmt in set(was["outputs"]) | set(today["outputs"])
                     if was["outputs"].get(fmt) != today["outputs"].get(fmt))
    assert not changed, f"normalized output of {changed} changed under version {today['version']}: {BUMP}"


def test_each_enrichers_output_changes_only_with_its_version(now):
    was, today = versions.recorded()["enrichers"], now["enrichers"]
    assert sorted(today) == sorted(was), f"enrichers added or removed: {BUMP}"
    for name, entry in today.items():
        assert entry["version"] == was[name]["version"], f"{name}'s version moved without its digest: {BUMP}"
        assert entry["output"] == was[name]["output"], f"{name}'s output changed under version {entry['version']}: {BUMP}"


def test_the_lemmatizers_output_changes_only_with_its_version(now):
    was, today = versions.recorded()["lemmatizer"], now["lemmatizer"]
    assert today["version"] == was["version"], f"the lemmatizer's version moved without its digest: {BUMP}"
    assert today["output"] == was["output"], f"lemmas changed under version {today['version']}: {BUMP}"


def test_a_source_edit_that_changes_no_output_changes_no_stamp():
    for name, cls in ENRICHERS.items():
        edited = type(cls.__name__, (cls,), {"__doc__": "the same enricher, its docstring edited",
                                             "__module__": __name__})
        assert edited().stamp == cls().stamp, name
    tree = ast.parse(Path(versions.__file__).parents[2].joinpath("crawl_assets/pipeline/version.py").read_text())
    [assign] = [n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "NORMALIZER_VERSION"]
    assert isinstance(assign.value, ast.Constant) and isinstance(assign.value.value, str), \
        "NORMALIZER_VERSION is a declared literal, not computed"
