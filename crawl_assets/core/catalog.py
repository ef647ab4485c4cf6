"""The installed source types: every ``SourceSpec`` registered under the ``crawl_assets.sources`` entry points.

A source type is a folder ``crawl_assets/sources/<platform>/`` with a ``spec.py`` and one line in
``pyproject.toml``::

    [project.entry-points."crawl_assets.sources"]
    hackernews = "crawl_assets.sources.hackernews.spec:SPEC"

Entry points are read from the installed metadata: after adding one, run ``pip install -e .`` again.
Platforms are listed by name (entry point order is not defined). The catalog is read once per process.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from crawl_assets.core.spec import EXPORT_FILE, FormatSpec, SourceSpec, resolve

GROUP = "crawl_assets.sources"


class CatalogError(ValueError):
    """An entry point that is not a valid source spec, or two specs claiming one platform or format."""


@dataclass(frozen=True)
class Catalog:
    specs: Mapping[str, SourceSpec]  # platform -> spec, by name

    @classmethod
    def of(cls, specs: Iterable[SourceSpec]) -> Catalog:
        by_platform: dict[str, SourceSpec] = {}
        formats: dict[str, str] = {}
        for spec in sorted(specs, key=lambda s: s.platform):
            if not isinstance(spec, SourceSpec):
                raise CatalogError(f"{spec!r} is not a SourceSpec")
            if spec.platform in by_platform:
                raise CatalogError(f"two source specs declare platform {spec.platform!r}")
            for fmt in spec.formats:
                if fmt.name in formats:
                    raise CatalogError(f"format {fmt.name!r} is declared by {formats[fmt.name]} and {spec.platform}")
                formats[fmt.name] = spec.platform
            unknown = set(spec.export_formats) - {f.name for f in spec.formats}
            if unknown:
                raise CatalogError(f"{spec.platform}: export formats {sorted(unknown)} are not among its formats")
            by_platform[spec.platform] = spec
        return cls(by_platform)

    def platforms(self) -> tuple[str, ...]:
        return tuple(self.specs)

    def spec(self, platform: str) -> SourceSpec:
        return self.specs[platform]

    def formats(self) -> dict[str, FormatSpec]:
        """Every format → its spec, platforms by name, each platform's formats in declaration order."""
        return {f.name: f for spec in self.specs.values() for f in spec.formats}

    def platform_of_format(self, fmt: str) -> str:
        return next(s.platform for s in self.specs.values() for f in s.formats if f.name == fmt)

    def kinds(self) -> tuple[str, ...]:
        """Every kind some platform accepts, in first-seen order."""
        seen = dict.fromkeys(k for spec in self.specs.values() for k in spec.allowed_kinds())
        return tuple(seen) if seen else (EXPORT_FILE,)


def load(group: str = GROUP) -> Catalog:
    """The specs installed under ``group``; a broken entry point fails loudly with its name."""
    specs = []
    for ep in entry_points(group=group):
        try:
            spec: Any = ep.load()
        except Exception as exc:  # noqa: BLE001 - name the entry point whatever went wrong
            raise CatalogError(f"source entry point {ep.name} = {ep.value} cannot be loaded: {exc}") from exc
        if not isinstance(spec, SourceSpec) or spec.platform != ep.name:
            raise CatalogError(f"source entry point {ep.name} = {ep.value} must be a SourceSpec of platform {ep.name!r}")
        specs.append(spec)
    return Catalog.of(specs)


@cache
def catalog() -> Catalog:
    """The installed catalog (read once per process)."""
    return load()


def platforms() -> tuple[str, ...]:
    return catalog().platforms()


def spec(platform: str) -> SourceSpec:
    return catalog().spec(platform)


def keeps_edit_histories(platform: str) -> bool:
    """Whether ``platform``'s records name every version of a post (``SourceSpec.edit_histories``); False for a
    platform not installed."""
    found = catalog().specs.get(platform)
    return bool(found and found.edit_histories)


@cache
def normalizer(fmt: str) -> Any:
    """The normalizer function of ``fmt`` (imported on first use)."""
    return resolve(catalog().formats()[fmt].normalizer)
