"""Typed registry options: the pydantic ``Options`` model a source spec declares (``SourceSpec.options_model``).

The registry validates a live source's ``options`` with it when the source is added and whenever the registry
is read (an error names the field: ``options.hits_per_page: ...``); the sync gets the parsed model
(``SourceEntry.typed_options``). The field helpers keep the lenient reading registries rely on: an empty value
means the default, a number out of range is brought into it. What has no reading at all (a word where a number
or a switch goes, a value outside a fixed set, a negative size) is refused.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints


class SourceOptions(BaseModel):
    """Base of a spec's options: unknown names are refused, the parsed model is read-only."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _or_default(default: Any, *, zero: bool = True) -> BeforeValidator:
    """``default`` for an empty value (None, ""), and for 0 unless ``zero`` is False (then 0 is a value)."""
    return BeforeValidator(lambda v: default if v is None or v == "" or (zero and v == 0) else v)


def _whole(value: Any) -> int:
    """``int(value)`` as the syncs read it (a float is cut), else a clear refusal."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"must be a whole number, not {str(value)[:40]!r}") from None


def Clamped(low: int, high: int, default: int) -> Any:  # noqa: N802 - a type, used as one
    """An integer, ``default`` when empty or 0, brought into ``[low, high]``."""
    return Annotated[int, BeforeValidator(lambda v: max(low, min(high, _whole(v)))), _or_default(default)]


def AtLeast(low: int, default: int | None, *, zero_is_default: bool = True) -> Any:  # noqa: N802 - a type, used as one
    """An integer, ``default`` when empty (and when 0, unless ``zero_is_default`` is False), at least ``low``.
    A ``default`` of None keeps "not given" apart (the sync then picks a value of its own)."""
    kind = int if default is not None else int | None
    return Annotated[kind, BeforeValidator(lambda v: v if v is None else max(low, _whole(v))),
                     _or_default(default, zero=zero_is_default)]


def PositiveOr(default: float, most: float) -> Any:  # noqa: N802 - a type, used as one
    """A number in ``(0, most]`` (an integer when ``default`` is one), ``default`` when empty or 0; a negative
    or larger one is refused."""
    bounds = Field(gt=0, le=most) if isinstance(default, int) else Field(gt=0, le=most, allow_inf_nan=False)
    return Annotated[type(default), bounds, _or_default(default)]


def TextOr(default: str) -> Any:  # noqa: N802 - a type, used as one
    """A string, ``default`` when empty."""
    return Annotated[str, BeforeValidator(lambda v: str(v)), _or_default(default)]


def OneOf(*choices: str, default: str) -> Any:  # noqa: N802 - a type, used as one
    """One of ``choices``, ``default`` when empty; anything else is refused, naming the choices."""
    return Annotated[Literal[choices], _or_default(default)]  # type: ignore[valid-type]


def OptionalText(pattern: str) -> Any:  # noqa: N802 - a type, used as one
    """A string matching ``pattern`` (anchor it: ``^...$``), None when empty."""
    return Annotated[Annotated[str, StringConstraints(pattern=pattern)] | None,
                     BeforeValidator(lambda v: None if v is None or v == "" else str(v))]


_TRUE, _FALSE = frozenset({"1", "1.0", "true", "yes", "on"}), frozenset({"0", "0.0", "false", "no", "off"})


def _switch(default: bool) -> Any:
    def parse(value: Any) -> bool:
        if value is None or value == "":
            return default
        if isinstance(value, bool):
            return value
        word = str(value).strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise ValueError("must be true or false (also yes/no, on/off, 1/0)")
    return parse


def Flag(default: bool) -> Any:  # noqa: N802 - a type, used as one
    """A switch, ``default`` when empty: a YAML boolean, 1/0, or true/false, yes/no, on/off in any case."""
    return Annotated[bool, BeforeValidator(_switch(default))]
