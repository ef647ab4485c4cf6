"""The ``crawl-assets`` command: one click group; each subcommand lives in its own module."""

from __future__ import annotations

import importlib

import click

# "module:attribute" of each subcommand (a click command or group), added as features land.
COMMANDS: list[str] = [
    "crawl_assets.cli.status:status",
    "crawl_assets.cli.normalize:normalize",
    "crawl_assets.cli.normalize:schema",
    "crawl_assets.cli.sources:sources",
    "crawl_assets.cli.es:es",
    "crawl_assets.cli.demo:demo",
    "crawl_assets.cli.telegram:telegram",
    "crawl_assets.cli.webhooks:webhooks",
]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="crawl_assets")
def cli() -> None:
    """Collect public or authorized social and feedback data into one searchable dataset."""


for _spec in COMMANDS:
    _module, _attr = _spec.split(":")
    cli.add_command(getattr(importlib.import_module(_module), _attr))


def main() -> None:
    cli(prog_name="crawl-assets")


if __name__ == "__main__":
    main()
