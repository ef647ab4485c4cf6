"""The ``crawl-assets`` command: one click group; each subcommand lives in its own module."""

from __future__ import annotations

import importlib

import click

from crawl_assets.cli.common import exit_code, leave
from crawl_assets.core.private import owner_only

# "module:attribute" of each subcommand (a click command or group), added as features land.
COMMANDS: list[str] = [
    "crawl_assets.cli.status:status",
    "crawl_assets.cli.normalize:normalize",
    "crawl_assets.cli.normalize:schema",
    "crawl_assets.cli.enrich:enrich",
    "crawl_assets.cli.sources:sources",
    "crawl_assets.cli.es:es",
    "crawl_assets.cli.demo:demo",
    "crawl_assets.cli.telegram:telegram",
    "crawl_assets.cli.erase:erase",
    "crawl_assets.cli.webhooks:webhooks",
    "crawl_assets.cli.ui:ui",
    "crawl_assets.cli.api:api",
    "crawl_assets.cli.sync:sync",
    "crawl_assets.cli.records:records",
    "crawl_assets.cli.release:release",
    "crawl_assets.cli.discover:discover",
]


class LazyGroup(click.Group):
    """Imports a subcommand's module only when that command runs: ``crawl-assets normalize`` then
    never loads Dagster, Elasticsearch or pyarrow (54 MiB peak instead of 134 MiB). The attribute
    name in ``COMMANDS`` is the command's name."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(spec.split(":")[1] for spec in COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        for spec in COMMANDS:
            module, attr = spec.split(":")
            if attr == cmd_name:
                return getattr(importlib.import_module(module), attr)
        return None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="crawl_assets")
def cli() -> None:
    """Collect public or authorized social and feedback data into one searchable dataset."""


def main() -> None:
    owner_only()  # whatever a command and the processes it starts create (lake, instance, exports): 0600 / 0700
    try:
        cli(prog_name="crawl-assets")
    except SystemExit as done:
        leave(exit_code(done))


if __name__ == "__main__":
    main()
