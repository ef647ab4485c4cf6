"""The version stamped on every derived Parquet part: the package version plus a hash of the code
that derives records (the schema, the normalize package, each installed format's normalizer modules, the
Parquet tables, edit-version resolution).

The files are found from the modules themselves (never from paths spelled here), so moving a module
keeps it hashed. A part written by other code is re-derived from raw at the next materialization, so a
normalizer fix reaches old data without collecting again, and unchanged code never re-derives anything.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import crawl_assets
from crawl_assets.core import catalog

_PACKAGE = Path(crawl_assets.__file__).parent
_CORE = ("crawl_assets.schema", "crawl_assets.normalize", "crawl_assets.core.envelope", "crawl_assets.sources.envelope",
         "crawl_assets.sources.html_text", "crawl_assets.lake.tables", "crawl_assets.pipeline.edit_versions")


def _files_of(module: str) -> list[Path]:
    """A module's file, or every module file of a package."""
    found = importlib.util.find_spec(module)
    assert found is not None and found.origin, module
    origin = Path(found.origin)
    return sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]


def _normalizer_files() -> list[Path]:
    """Every module beside an installed format's normalizer whose name says it normalizes (``normalize*``)."""
    files: set[Path] = set()
    for fmt in catalog.catalog().formats().values():
        module = fmt.normalizer.partition(":")[0]
        for path in _files_of(module):
            files |= {p for p in path.parent.glob("normalize*.py")} | {p for p in path.parent.glob("normalize/*.py")}
    return sorted(files)


def _deriver_files() -> list[Path]:
    files = [p for module in _CORE for p in _files_of(module)] + _normalizer_files()
    return sorted(set(files), key=lambda p: p.relative_to(_PACKAGE).as_posix())


def _compute() -> str:
    digest = hashlib.sha256()
    for path in _deriver_files():
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    return f"{crawl_assets.__version__}+{digest.hexdigest()[:12]}"


NORMALIZER_VERSION = _compute()
