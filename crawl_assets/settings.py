"""Where things live on disk, resolved from the environment in one place.

Every path has an embedded default under ``DAGSTER_HOME`` so a fresh machine works with no
configuration, and each can be overridden by one documented variable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
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


@dataclass(frozen=True)
class ElasticsearchSettings:
    """The cluster settings as set (``CRAWL_ES_URL``: comma-separated hosts, ``CRAWL_ES_API_KEY``,
    ``CRAWL_ES_USERNAME``, ``CRAWL_ES_PASSWORD``, ``CRAWL_ES_CA_CERTS``, ``CRAWL_ES_VERIFY_CERTS``). The
    definitions hand the credentials to Dagster as ``EnvVar``s (their values stay out of run config); the
    CLI uses them directly."""

    url: str = ""
    api_key: str = ""
    username: str = ""
    password: str = ""
    ca_certs: str = ""
    verify_certs: bool = True

    def host_list(self, url: str | None = None, default: str = "") -> list[str]:
        """The hosts of ``url`` if given, else the configured ones, else ``default``'s."""
        return [h.strip() for h in (url or self.url or default).split(",") if h.strip()]


def elasticsearch() -> ElasticsearchSettings:
    """The cluster settings from the environment, read when called."""
    env = os.environ
    return ElasticsearchSettings(
        url=env.get("CRAWL_ES_URL", ""),
        api_key=env.get("CRAWL_ES_API_KEY", ""),
        username=env.get("CRAWL_ES_USERNAME", ""),
        password=env.get("CRAWL_ES_PASSWORD", ""),
        ca_certs=env.get("CRAWL_ES_CA_CERTS", ""),
        verify_certs=env.get("CRAWL_ES_VERIFY_CERTS", "true").lower() not in ("0", "false", "no"),
    )
