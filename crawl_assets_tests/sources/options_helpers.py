"""Helpers for the typed registry options of a source spec (``SourceSpec.options_model``): the error one bad
option gives, and a registry file where a bad entry sits between good ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from crawl_assets.registry import Registry, SourceEntry, load_registry


def entry(platform: str, kind: str, identifier: str, **options: Any) -> SourceEntry:
    return SourceEntry(name="s", tenant="acme", platform=platform, kind=kind, identifier=identifier, options=options)


def refusal(platform: str, kind: str, identifier: str, **options: Any) -> tuple[str, str]:
    """(field, message) of the one error these options give when the entry is validated."""
    with pytest.raises(ValidationError) as info:
        entry(platform, kind, identifier, **options)
    (err,) = info.value.errors()
    return ".".join(str(p) for p in err["loc"]), err["msg"].removeprefix("Value error, ")


def assert_refused(platform: str, kind: str, identifier: str, option: str, value: Any, message: str) -> None:
    """Validating the entry with ``option: value`` fails on that option alone, with a message starting so."""
    field, why = refusal(platform, kind, identifier, **{option: value})
    assert field == f"options.{option}" and why.startswith(message), (field, why)


def registry_with_a_bad_entry(tmp_path: Path, platform: str, kind: str, identifier: str, good: dict[str, Any],
                              bad: dict[str, Any]) -> Registry:
    """A registry file of three entries, ``bad`` options in the middle one, read as every reader reads it."""
    sources = [{"name": name, "tenant": "acme", "platform": platform, "kind": kind, "identifier": identifier,
                "options": options} for name, options in (("first", good), ("broken", bad), ("last", {}))]
    path = tmp_path / "sources.yaml"
    path.write_text(yaml.safe_dump({"sources": sources}, sort_keys=False))
    return load_registry(path)
