"""What a source type declares so the rest of the project can use it without knowing it.

A plugin names things by ``"module:attribute"`` strings and is resolved lazily: the registry,
partitions and CLI read the light declaration (platform, kinds, formats) without importing clients,
Telethon or Dagster assets, and nothing imports in a cycle.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def resolve(spec: str) -> Any:
    """``"package.module:attr.sub"`` → the object."""
    module, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class SourcePlugin:
    """One source type (platform).

    - ``kinds``: registry kinds it can sync live (``export_file`` is always allowed when
      ``export_formats`` is non-empty).
    - ``formats``: normalizer of each raw format it writes or imports (``format -> "module:function"``).
    - ``export_formats``: formats an ``export_file`` source may hold; the first is the default.
    - ``raw_asset``: ``"module:attr"`` of its raw ``AssetsDefinition`` (built with ``build_raw_asset``).
    - ``resources``: resource key → ``"module:factory"`` building the resource from the environment.
    - ``persons``: ``"module:attr"`` of its ``PersonIds`` (``crawl_assets.normalize.persons``): where its raw
      payloads name a person, declared beside the normalizer that uses it; erasure cuts people out by it.
    - ``options``: the registry option names its live kinds read (``entry.options``); an export file
      takes ``format`` and the normalization options (``timezone``, ``languages``) only.
      ``crawl-assets sources add`` refuses any other name.
    """

    platform: str
    description: str
    kinds: tuple[str, ...]
    formats: Mapping[str, str]
    export_formats: tuple[str, ...] = ()
    raw_asset: str = ""
    resources: Mapping[str, str] = field(default_factory=dict)
    persons: str = ""
    options: tuple[str, ...] = ()

    def allowed_kinds(self) -> tuple[str, ...]:
        return self.kinds + (("export_file",) if self.export_formats else ())
