"""Typed registry options: the pydantic ``Options`` model a source spec declares (``SourceSpec.options_model``).

The registry validates a live source's ``options`` with it when the source is added and whenever the registry
is read (an error names the field: ``options.hits_per_page: ...``); the sync gets the parsed model
(``SourceEntry.typed_options``). The field helpers keep the lenient reading registries rely on: an empty value
means the default, a number out of range is brought into it.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict


class SourceOptions(BaseModel):
    """Base of a spec's options: unknown names are refused, the parsed model is read-only."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _or_default(default: Any) -> BeforeValidator:
    return BeforeValidator(lambda v: default if v is None or v == "" or v == 0 else v)


def Clamped(low: int, high: int, default: int) -> Any:  # noqa: N802 - a type, used as one
    """An integer, ``default`` when empty or 0, brought into ``[low, high]``."""
    return Annotated[int, BeforeValidator(lambda v: max(low, min(high, int(v)))), _or_default(default)]


def AtLeast(low: int, default: int) -> Any:  # noqa: N802 - a type, used as one
    """An integer, ``default`` when empty or 0, at least ``low``."""
    return Annotated[int, BeforeValidator(lambda v: max(low, int(v))), _or_default(default)]


def TextOr(default: str) -> Any:  # noqa: N802 - a type, used as one
    """A string, ``default`` when empty."""
    return Annotated[str, BeforeValidator(lambda v: str(v)), _or_default(default)]
