"""Where things live on disk, resolved from the environment in one place.

Every path has an embedded default under ``DAGSTER_HOME`` so a fresh machine works with no
configuration, and each can be overridden by one documented variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
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


def environment() -> Mapping[str, str]:
    """The process environment, for the variables whose *names* are data rather than settings: the per-tenant
    secrets ``CRAWL_<PLATFORM>_<SECRET>[__TENANT[__NAME]]`` that the registry's tenants and credential names
    select (``crawl_assets.sources.tenant_secrets``). Every such lookup goes through here; inside Dagster the
    values found stay ``EnvVar`` references."""
    return os.environ


# resource field <- variable (type): Telegram tunables an operator may set without writing run config
_TELEGRAM_TUNABLES = {
    "request_interval_seconds": ("CRAWL_TELEGRAM_REQUEST_INTERVAL", float),
    "flood_sleep_threshold_seconds": ("CRAWL_TELEGRAM_FLOOD_SLEEP_MAX", int),
    "max_pages_per_run": ("CRAWL_TELEGRAM_MAX_PAGES", int),
    "max_messages_per_run": ("CRAWL_TELEGRAM_MAX_MESSAGES", int),
}


def telegram_tunables(environ: Mapping[str, str] | None = None) -> dict[str, float]:
    """The ``TelegramResource`` fields set in the environment (unset ones keep the resource's defaults);
    a value that is not a number is refused naming its variable."""
    env = environment() if environ is None else environ
    out: dict[str, float] = {}
    for field, (var, kind) in _TELEGRAM_TUNABLES.items():
        value = env.get(var)
        if not value:
            continue
        try:
            out[field] = kind(float(value))
        except ValueError:
            raise ValueError(f"environment variable {var}: expected a number, got {value!r}") from None
    return out
