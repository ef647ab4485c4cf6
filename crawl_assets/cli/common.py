"""What CLI commands share: loading the registry with clean errors, and exiting 2 on bad input."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from crawl_assets import settings
from crawl_assets.core.display import shown
from crawl_assets.registry import Registry, RegistryConflict, RegistryFileError, load_registry

def _location(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | str | None:
    return settings.registry_location(value) if value else None


registry_option = click.option(
    "--registry",
    "registry_path",
    type=str,
    default=None,
    callback=_location,
    help="Registry: a file, s3://bucket/key or postgres[:name] (default: $CRAWL_REGISTRY or "
    "$DAGSTER_HOME/sources.yaml).",
)


def fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"error: {shown(message)}", err=True)
    sys.exit(code)


def open_registry(path: Path | str | None, *, strict: bool = True) -> Registry:
    """Load the registry; with ``strict`` any invalid entry is reported and the command exits 2."""
    try:
        reg = load_registry(path or settings.registry_path())
    except RegistryFileError as exc:
        fail(str(exc))
    if strict and reg.errors:
        for err in reg.errors:
            click.echo(f"error: {err}", err=True)  # shown: EntryError escapes itself
        fail(f"{len(reg.errors)} invalid entr{'y' if len(reg.errors) == 1 else 'ies'} in {reg.path}; fix them first")
    return reg


def save_registry(reg: Registry) -> None:
    """Save an edited registry; exit 2 when someone else changed it since it was read (nothing is overwritten:
    run the command again) or when it cannot be written."""
    try:
        reg.save()
    except RegistryConflict as exc:
        fail(f"{exc}; nothing was changed: run the command again")
    except RegistryFileError as exc:
        fail(str(exc))
