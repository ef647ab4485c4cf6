"""``crawl-assets enrich --enricher NAME FILE...``: one enricher over normalized records, outside Dagster.

Same code as the ``{platform}/enrichment/{enricher}`` assets (``crawl_assets.enrich``). Reads what
``crawl-assets normalize`` writes (JSON lines, plain or gzip, ``-`` for stdin) or normalized Parquet parts;
prints the enricher's rows as JSON lines, each stamped with the enricher's name and version
(``enricher_version``) and marked ``inferred``. A line that is not a normalized record is reported on stderr
as ``file:line: reason`` and skipped (``--strict``: exit 1); a bad option is one line and exit 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import yaml

from crawl_assets.cli.normalize import open_input

MAX_SHOWN_PROBLEMS = 20


def _fail(message: str) -> None:
    click.echo(f"crawl-assets enrich: {message}", err=True)
    sys.exit(2)


def _params(name: str, pairs: tuple[str, ...], config: Path | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if config is not None:
        from crawl_assets.enrich.config import EnrichmentConfigError, read_config

        try:
            params.update(read_config(config).get(name) or {})
        except EnrichmentConfigError as exc:
            _fail(str(exc))
        params.pop("enabled", None)
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            _fail(f"--param {pair!r}: expected NAME=VALUE")
        try:
            params[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            _fail(f"--param {pair!r}: the value is not YAML: {exc}")
    return params


@click.command("enrich")
@click.option("--enricher", "name", required=True, metavar="NAME",
              help="personal_data, near_duplicates, account_activity, trends, classifier, topics or entities.")
@click.option("--param", "pairs", multiple=True, metavar="NAME=VALUE",
              help="A parameter (VALUE in YAML: 0.7, [email, phone], true); repeatable; overrides --config.")
@click.option("--config", type=click.Path(dir_okay=False, path_type=Path),
              help="An enrichment.yaml: the enricher's parameters from its section.")
@click.option("--table", metavar="TABLE",
              help="Tenant-wide enrichers: which table to print (near_duplicates: clusters, members; trends: "
                   "trends, windows; account_activity: accounts; topics: topics, assignments, model, "
                   "topic_ids). Default: the first.")
@click.option("--strict", is_flag=True, help="Exit 1 when any input line was not a normalized record.")
@click.option("--quiet", "-q", is_flag=True, help="Only problems on stderr, no summary.")
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
def enrich(name: str, pairs: tuple[str, ...], config: Path | None, table: str | None, strict: bool, quiet: bool,
           files: tuple[str, ...]) -> None:
    """Run one enricher over normalized records in FILE... and print its rows (JSON lines) on stdout.

    Records are only read. Later lines are later observations (the latest observation of a key counts for
    tenant-wide enrichers). One tenant per run.
    """
    import orjson

    from crawl_assets.enrich.config import build
    from crawl_assets.enrich.files import FileRun, enrich_tables, is_parquet, json_line_tables, parquet_tables

    try:
        enricher = build(name, _params(name, pairs, config))
    except ValueError as exc:
        _fail(str(exc))
    for path in files:
        if path != "-" and not Path(path).is_file():
            _fail(f"cannot read {path}: no such file")
    run = FileRun()
    out = sys.stdout.buffer
    rows_written = 0

    def tables():
        for path in files:
            label = "<stdin>" if path == "-" else path
            if path != "-" and is_parquet(Path(path)):
                yield from parquet_tables(path, label, run)
                continue
            with open_input(path) as stream:
                yield from json_line_tables(stream, label, run)

    def write(rows) -> None:
        nonlocal rows_written
        for row in rows.to_pylist():
            out.write(orjson.dumps(row, option=orjson.OPT_UTC_Z | orjson.OPT_SERIALIZE_NUMPY) + b"\n")
        rows_written += rows.num_rows

    try:
        enrich_tables(enricher, tables(), run, table=table, on_rows=write)
        out.flush()
    except ValueError as exc:
        _fail(str(exc))
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(0)
    for problem in run.problems[:MAX_SHOWN_PROBLEMS]:
        where = problem.name if problem.line is None else f"{problem.name}:{problem.line}"
        click.echo(f"{where}: {problem.reason}", err=True)
    if len(run.problems) > MAX_SHOWN_PROBLEMS:
        click.echo(f"... and {len(run.problems) - MAX_SHOWN_PROBLEMS} more problems", err=True)
    if not quiet:
        click.echo(f"crawl-assets enrich: {enricher.stamp}: {run.records} records read, {rows_written} rows, "
                   f"{len(run.problems)} problems", err=True)
    if strict and run.problems:
        sys.exit(1)
