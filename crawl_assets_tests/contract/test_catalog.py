"""The source catalog: every source type is registered, light to load, and names only code that exists."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from crawl_assets.core import catalog
from crawl_assets.core.options import SourceOptions
from crawl_assets.core.catalog import EXPORT_FILE, SourceSpec, resolve

SOURCES = Path(catalog.__file__).resolve().parents[1] / "sources"
HEAVY = ("dagster", "httpx", "telethon", "pandas", "pyarrow", "elasticsearch", "fsspec", "sqlalchemy")


def test_every_source_folder_with_a_spec_is_registered():
    folders = {p.parent.name for p in SOURCES.glob("*/spec.py")}
    missing = folders - set(catalog.platforms())
    assert not missing, (f"source folders without an entry point: {sorted(missing)}; add one line per platform "
                         "to [project.entry-points.\"crawl_assets.sources\"] in pyproject.toml, then run "
                         "`pip install -e .` (entry points are read from the installed metadata)")


def test_loading_every_spec_imports_nothing_heavy():
    code = ("import json, sys; from crawl_assets.core import catalog; catalog.catalog(); "
            f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(HEAVY)!r}))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


@pytest.mark.parametrize("platform", catalog.platforms())
def test_a_spec_names_only_code_that_exists(platform):
    spec = catalog.spec(platform)
    assert isinstance(spec, SourceSpec) and spec.platform == platform
    for fmt in spec.formats:
        assert callable(resolve(fmt.normalizer)), fmt.name
        if fmt.sniff:
            assert callable(resolve(fmt.sniff)), fmt.name
    pull = spec.pull
    for target in (spec.persons, spec.live, spec.resource, pull and pull.sync, pull and pull.client):
        if target:
            assert resolve(target) is not None, target
    if pull:
        assert callable(resolve(pull.sync)) and pull.raw_format in {f.name for f in spec.formats}
        assert pull.client or spec.resource, "a pull source builds its client in PullSpec.client or its own resource"
    assert set(spec.identifier_hints) <= set(spec.allowed_kinds()) - {EXPORT_FILE}
    assert issubclass(spec.options_model, SourceOptions)  # typed options: every one has a default, no other name
    assert spec.options_model.model_validate({}) is not None
    with pytest.raises(ValueError):
        spec.options_model.model_validate({"no_such_option": 1})
    assert {s.format for s in spec.samples} <= set(spec.export_formats)


def test_two_specs_cannot_claim_one_format():
    one = catalog.spec(catalog.platforms()[0])
    other = SourceSpec(platform="other", description="", raw_asset="other_raw", raw_description="", kinds=(),
                       formats=one.formats)
    with pytest.raises(catalog.CatalogError, match="declared by"):
        catalog.Catalog.of([one, other])
