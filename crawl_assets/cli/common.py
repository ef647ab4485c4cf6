"""What CLI commands share: loading the registry with clean errors, and exiting 2 on bad input."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from crawl_assets import settings
from crawl_assets.registry import Registry, RegistryFileError, load_registry

registry_option = click.option(
    "--registry",
    "registry_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Registry file (default: $CRAWL_REGISTRY or $DAGSTER_HOME/sources.yaml).",
)


def fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def open_registry(path: Path | None, *, strict: bool = True) -> Registry:
    """Load the registry; with ``strict`` any invalid entry is reported and the command exits 2."""
    try:
        reg = load_registry(path or settings.registry_path())
    except RegistryFileError as exc:
        fail(str(exc))
    if strict and reg.errors:
        for err in reg.errors:
            click.echo(f"error: {err}", err=True)
        fail(f"{len(reg.errors)} invalid entr{'y' if len(reg.errors) == 1 else 'ies'} in {reg.path}; fix them first")
    return reg
