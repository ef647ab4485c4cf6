"""The version stamped on every derived Parquet part: the package version plus a hash of the code
that derives records (schema, normalize/, each platform's normalize*.py modules).

A part written by other code is re-derived from raw at the next materialization, so a normalizer
fix reaches old data without collecting again, and unchanged code never re-derives anything.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import crawl_assets

_PACKAGE = Path(crawl_assets.__file__).parent


def _deriver_files() -> list[Path]:
    files = [*sorted((_PACKAGE / "schema").glob("*.py")), *sorted((_PACKAGE / "normalize").glob("*.py"))]
    files += sorted((_PACKAGE / "sources").glob("*/normalize*.py"))
    files += [_PACKAGE / "lake" / "tables.py", _PACKAGE / "assets" / "edit_versions.py"]
    return files


def _compute() -> str:
    digest = hashlib.sha256()
    for path in _deriver_files():
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    return f"{crawl_assets.__version__}+{digest.hexdigest()[:12]}"


NORMALIZER_VERSION = _compute()
