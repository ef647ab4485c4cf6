"""Which enrichers run, with which parameters: ``enrichment.yaml``.

    # $CRAWL_ENRICHMENT, else $DAGSTER_HOME/enrichment.yaml; without a file every enricher runs with its defaults
    enrichers:
      personal_data: {redacted_view: true}
      near_duplicates: {threshold: 0.7}
      classifier: {model: /models/topics.skops, task: topic}
      trends: {window_hours: 6}
      account_activity: {enabled: false}

The file is read when the code location loads (the enrichers' stamps are the assets' code versions): edit
it, reload the code location, and the assets whose stamp changed show as stale. A bad file is one error
naming the file and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from crawl_assets import settings
from crawl_assets.enrich.activity import AccountActivity
from crawl_assets.enrich.base import Enricher
from crawl_assets.enrich.classifier import Classifier
from crawl_assets.enrich.near_duplicates import NearDuplicates
from crawl_assets.enrich.pii import PersonalData
from crawl_assets.enrich.trends import Trends

ENRICHERS: dict[str, type[Enricher]] = {cls.name: cls for cls in
                                        (PersonalData, NearDuplicates, AccountActivity, Trends, Classifier)}
MAX_CONFIG_BYTES = 1 << 20


class EnrichmentConfigError(ValueError):
    """``enrichment.yaml`` is unreadable or names something unknown; the message says where."""


def config_path() -> Path:
    """``CRAWL_ENRICHMENT``, else ``$DAGSTER_HOME/enrichment.yaml`` (``crawl_assets.settings``)."""
    return settings.enrichment_path()


def build(name: str, params: dict[str, Any] | None = None) -> Enricher:
    """One enricher by name with ``params`` (the others at their defaults)."""
    if name not in ENRICHERS:
        raise ValueError(f"unknown enricher {name!r}; expected one of {', '.join(sorted(ENRICHERS))}")
    return ENRICHERS[name](**(params or {}))


def read_config(path: Path) -> dict[str, Any]:
    """The ``enrichers`` section of ``path``: enricher name -> parameters (checked for shape and names)."""
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise EnrichmentConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes")
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise EnrichmentConfigError(f"{path}: cannot be read: {exc}") from None
    if not isinstance(data, dict) or set(data) - {"enrichers"}:
        raise EnrichmentConfigError(f"{path}: expected one top-level key 'enrichers'")
    section = data.get("enrichers") or {}
    if not isinstance(section, dict):
        raise EnrichmentConfigError(f"{path}: 'enrichers' must map enricher names to their parameters")
    unknown = set(section) - set(ENRICHERS)
    if unknown:
        raise EnrichmentConfigError(f"{path}: unknown enricher(s) {', '.join(sorted(map(str, unknown)))}; "
                                    f"expected {', '.join(ENRICHERS)}")
    for name, params in section.items():
        if params is not None and not isinstance(params, dict):
            raise EnrichmentConfigError(f"{path}: enrichers.{name} must be a mapping of parameters")
    return {name: dict(params or {}) for name, params in section.items()}


def load_enrichers(path: Path | None = None) -> list[Enricher]:
    """The enabled enrichers, configured; every enricher at its defaults when the file does not exist."""
    path = path or config_path()
    if not path.exists():
        return [cls() for cls in ENRICHERS.values()]
    section = read_config(path)
    enabled = []
    for name, cls in ENRICHERS.items():
        params = section.get(name, {})
        if not params.pop("enabled", True):
            continue
        try:
            enabled.append(cls(**params))
        except ValueError as exc:
            raise EnrichmentConfigError(f"{path}: enrichers.{name}: {exc}") from None
    return enabled
