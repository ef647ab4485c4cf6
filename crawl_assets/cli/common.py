"""What CLI commands share: loading the registry with clean errors, exiting 2 on bad input, a new
DAGSTER_HOME's instance config."""

from __future__ import annotations

import shutil
import sys
from importlib import resources
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


_SKIP_TEARDOWN = {"asked": False}


def skip_teardown_at_exit() -> None:
    """Ask the entry point to end the process without the interpreter's teardown once the command is done:
    Arrow's thread pools can abort a finished process there (apache/arrow#34314: exit 134 after all was
    written). In-process callers (tests through CliRunner) are unaffected: only ``main()`` acts on it."""
    _SKIP_TEARDOWN["asked"] = True


def exit_code(done: SystemExit) -> int:
    return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)


def leave(code: int) -> NoReturn:
    """Exit with ``code``, skipping the interpreter's teardown when a command asked for it (streams flushed)."""
    if not _SKIP_TEARDOWN["asked"]:
        sys.exit(code)
    import logging
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can reach it
            pass
    logging.shutdown()
    os._exit(code)


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


def install_instance_yaml(home: Path) -> None:
    """Give a new DAGSTER_HOME the project's instance config (an existing one is left alone)."""
    home.mkdir(parents=True, exist_ok=True)
    target = home / "dagster.yaml"
    if not target.exists():
        shutil.copyfile(str(resources.files("crawl_assets") / "instance" / "dagster.yaml"), target)
