"""Where things live on disk, resolved from the environment in one place.

Every path has an embedded default under ``DAGSTER_HOME`` so a fresh machine works with no
configuration, and each can be overridden by one documented variable.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_HOME = ".crawl_home"


def dagster_home() -> Path:
    """The Dagster instance folder (``DAGSTER_HOME``), or ``./.crawl_home`` when unset."""
    return Path(os.environ.get("DAGSTER_HOME") or DEFAULT_HOME).resolve()


def lake_root() -> str:
    """Lake root: ``CRAWL_LAKE`` (a folder or any fsspec URL), else ``$DAGSTER_HOME/lake``."""
    return os.environ.get("CRAWL_LAKE") or str(dagster_home() / "lake")


def registry_path() -> Path:
    """Source registry file: ``CRAWL_REGISTRY``, else ``$DAGSTER_HOME/sources.yaml``."""
    value = os.environ.get("CRAWL_REGISTRY")
    return Path(value).resolve() if value else dagster_home() / "sources.yaml"


def import_root() -> Path:
    """Where export files must be: ``CRAWL_IMPORT_ROOT``, else ``$DAGSTER_HOME/imports``; one folder per
    tenant below it (``crawl_assets.sources.exports``)."""
    value = os.environ.get("CRAWL_IMPORT_ROOT")
    return Path(value).resolve() if value else dagster_home() / "imports"
