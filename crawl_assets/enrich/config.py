"""Which enrichers run, with which parameters: ``enrichment.yaml``.

    # $CRAWL_ENRICHMENT, else $DAGSTER_HOME/enrichment.yaml; without a file every enricher runs with its defaults
    enrichers:
      personal_data: {redacted_view: true}
      near_duplicates: {threshold: 0.7}
      classifier: {model: topics.skops, task: topic}   # under $CRAWL_MODELS
      trends: {window_hours: 6}
      account_activity: {enabled: false}

The file is read when the code location loads (the enrichers' stamps are the assets' code versions): edit
it, reload the code location, and the assets whose stamp changed show as stale. A bad file costs the
enrichment only, never the code location: it is read bounded (a regular file of at most ``MAX_CONFIG_BYTES``,
YAML anchors and aliases refused while parsing, so nothing expands), and an enricher whose section cannot be
used (or every enricher, when the file cannot) becomes ``Unusable``: its assets stay, and running one fails
with the error naming the file and the key. Model files are checked by the classifier (a models root, regular
files, a size bound) and loaded only in a run.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, ClassVar

import yaml

from crawl_assets import settings
from crawl_assets.core.files import FileRefused, read_regular
from crawl_assets.enrich.account_types import AccountTypes
from crawl_assets.enrich.activity import AccountActivity
from crawl_assets.enrich.base import Enricher
from crawl_assets.enrich.classifier import Classifier
from crawl_assets.enrich.coordination import Coordination
from crawl_assets.enrich.entities import Entities
from crawl_assets.enrich.near_duplicates import NearDuplicates
from crawl_assets.enrich.pii import PersonalData
from crawl_assets.enrich.places import Places
from crawl_assets.enrich.topics import Topics
from crawl_assets.enrich.trends import Trends

ENRICHERS: dict[str, type[Enricher]] = {cls.name: cls for cls in
                                        (PersonalData, NearDuplicates, AccountActivity, Trends, Classifier)}
ENRICHERS.update({cls.name: cls for cls in (Topics, Entities, Places, Coordination, AccountTypes)})
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


class _NoAliases(yaml.SafeLoader):
    """PyYAML's safe loader that refuses an anchor or alias where it meets one, before anything is built or
    expanded (an alias bomb in ``trusted_types`` would otherwise expand in every reader). One parser scans and
    loads: a file it cannot read whole (an anchor name it does not accept) is an error, never a fallback."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.composer.ComposerError(None, None, "YAML anchors and aliases are not allowed in "
                                              "enrichment.yaml: write each value out", event.start_mark)
        return super().compose_node(parent, index)


def _read_bounded(path: Path) -> bytes:
    """The file's bytes: a regular file (never a device, FIFO or socket), at most ``MAX_CONFIG_BYTES``."""
    try:
        return read_regular(path, MAX_CONFIG_BYTES, follow_links=True)
    except FileRefused as exc:
        raise EnrichmentConfigError(f"{path}: {exc}") from None


def read_config(path: Path) -> dict[str, Any]:
    """The ``enrichers`` section of ``path``: enricher name -> parameters (checked for shape and names)."""
    try:
        data = yaml.load(_read_bounded(path).decode("utf-8"), Loader=_NoAliases) or {}  # noqa: S506 - safe loader
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


class Unusable(Enricher):
    """An enricher whose configuration cannot be used: its assets stay in the code location (nothing else is
    lost), its stamp says so, and running it fails with ``reason`` (``check_usable``)."""

    version: ClassVar[str] = "unusable"

    def __init__(self, cls: type[Enricher], reason: str) -> None:  # noqa: D107 - no parameters are checked
        self.name = cls.name  # type: ignore[misc]
        self.scope = cls.scope  # type: ignore[misc]
        self.description = f"Not configured: {reason}"  # type: ignore[misc]
        self.tables = getattr(cls, "tables", ())
        self.reason = reason
        self.params = {}

    def fingerprint(self) -> str:
        return hashlib.sha256(self.reason.encode()).hexdigest()

    def check_usable(self) -> None:
        raise EnrichmentConfigError(self.reason)


def _configured(cls: type[Enricher], params: dict[str, Any], path: Path) -> Enricher | None:
    """``cls`` with ``params`` and its stamp (which hashes a model's bytes); ``Unusable`` when either fails."""
    if not params.pop("enabled", True):
        return None
    try:
        enricher = cls(**params)
        _ = enricher.stamp
    except (ValueError, TypeError, OSError) as exc:
        return Unusable(cls, f"{path}: enrichers.{cls.name}: {exc}")
    return enricher


def load_enrichers(path: Path | None = None) -> list[Enricher]:
    """The enabled enrichers, configured; every enricher at its defaults when the file does not exist. Never
    raises for a bad file: what cannot be used comes back ``Unusable`` (every enricher, when the file cannot be
    read)."""
    path = path or config_path()
    if not os.path.lexists(path):
        return [cls() for cls in ENRICHERS.values()]
    try:
        section = read_config(path)
    except EnrichmentConfigError as exc:
        return [Unusable(cls, str(exc)) for cls in ENRICHERS.values()]
    return [e for name, cls in ENRICHERS.items() if (e := _configured(cls, section.get(name, {}), path)) is not None]
