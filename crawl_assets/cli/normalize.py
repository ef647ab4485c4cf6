"""``crawl-assets normalize`` and ``crawl-assets schema``: normalize files users already have, outside Dagster.

Same code as the ``normalized_records``/``relation_edges`` assets. Bad input never produces a traceback:
a malformed item is reported on stderr as ``file:line: reason`` (at most ``MAX_SHOWN_ERRORS`` per file, then
a count; ``--rejections-out`` keeps them all) and skipped (``--strict`` turns that into exit 1). Each file
stands alone: one that cannot be read is reported and the others are written (exit 1 when a file gave
nothing but errors). An unknown format or a missing file is a one-line error with exit 2.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import click
import orjson

from crawl_assets.normalize.build import InputError, UnknownFormatError, parse_instant
from crawl_assets.normalize.context import NormalizeContext, normalize_options
from crawl_assets.normalize.dedupe import Deduper
from crawl_assets.normalize.edges import is_superseded
from crawl_assets.core import catalog
from crawl_assets.core.catalog import resolve
from crawl_assets.normalize.reading import get_normalizer
from crawl_assets.normalize.output import EditHistories, rewritten_line
from crawl_assets.normalize.parallel import MAX_AUTO_JOBS, auto_jobs, normalize_encoded, splittable_formats
from crawl_assets.schema.record import Edge, Rejection, record_json_schema

EXIT_BAD_INPUT = 1
EXIT_USAGE = 2
_BUFFER = 1 << 20  # API pages are ~1 MB lines: a large buffer halves the cost of splitting them


MAX_SHOWN_ERRORS = 20  # per input file; the rest are counted (all of them go to --rejections-out)


@contextmanager
def open_input(path: str) -> Iterator[IO[bytes]]:
    """A binary stream of ``path`` (``-`` is stdin); decompression and a BOM are handled by the normalizers
    (``crawl_assets.normalize.reading``)."""
    if path == "-":
        yield sys.stdin.buffer
        return
    with open(path, "rb", buffering=_BUFFER) as handle:
        yield handle


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    click.echo(f"crawl-assets normalize: {message}", err=True)
    sys.exit(code)


class _Report:
    """Per-file accounting: errors shown (bounded), non-posts counted, every rejection to an optional file."""

    def __init__(self, rejections_out: IO[bytes] | None) -> None:
        self.errors = 0
        self.unavailable = 0  # tombstones: posts seen gone or hidden (deleted, protected, suspended)
        self.skipped: Counter[str] = Counter()
        self.unreadable: list[str] = []
        self._out = rejections_out
        self._shown = self._file_errors = 0

    def start_file(self) -> None:
        self._shown = self._file_errors = 0

    def add(self, rejection: Rejection) -> None:
        if self._out is not None:
            self._out.write(rejection.model_dump_json().encode() + b"\n")
        if not rejection.error:
            self.skipped[rejection.reason] += 1
            return
        self.errors += 1
        self._file_errors += 1
        if self._shown < MAX_SHOWN_ERRORS:
            self._shown += 1
            _report(rejection)

    def end_file(self, name: str, records: int) -> None:
        hidden = self._file_errors - self._shown
        if hidden:
            more = "" if self._out is not None else " (--rejections-out FILE lists them all)"
            click.echo(f"{name}: {hidden} more errors not shown{more}", err=True)
        if records == 0 and self._file_errors:
            self.unreadable.append(name)


@click.command("normalize")
@click.option("--format", "fmt", required=True, metavar="FORMAT", help=f"Input format: {', '.join(catalog.catalog().formats())}.")
@click.option("--tenant", default="default", show_default=True, help="Tenant the records belong to.")
@click.option("--source", default="cli", show_default=True, help="Source name recorded in provenance.")
@click.option("--relations-out", type=click.Path(dir_okay=False, writable=True), help="Write edges (JSON lines) here.")
@click.option("--rejections-out", type=click.Path(dir_okay=False, writable=True),
              help="Write every rejection (bad input and non-posts, with file, line and reason) here, one JSON per line.")
@click.option("--timezone", "time_zone", metavar="ZONE",
              help="IANA time zone of an export's local times (Telegram Desktop exports without date_unixtime).")
@click.option("--collected-at", "collected_at", metavar="INSTANT",
              help="When the input was collected (ISO 8601 with offset): provenance.collected_at, deletion times.")
@click.option("--languages", metavar="CODES",
              help="ISO 639-1 codes the texts are in (e.g. fa,en): language detection chooses among them.")
@click.option("--account-id", "account_id", metavar="ID",
              help="The X account an account archive belongs to (its tweets' author_id); default: the accountId of the "
              "account.js beside each x-archive file.")
@click.option("--strict", is_flag=True, help="Exit 1 when any input item was malformed.")
@click.option("--quiet", "-q", is_flag=True, help="Only errors on stderr, no summary.")
@click.option(
    "--jobs", "-j", type=click.IntRange(min=0), default=0, show_default=True,
    help=f"Processes normalizing line formats ({', '.join(sorted(splittable_formats()))}), this one included; 0: one "
    f"per CPU, at most {MAX_AUTO_JOBS} (peak RSS stays under 150 MiB), for inputs over 16 MiB, else 1. Each "
    "process beyond the first adds ~60 MiB; the gain depends on the second core being free.",
)  # fmt: skip
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
def normalize(
    fmt: str, tenant: str, source: str, relations_out: str | None, rejections_out: str | None,
    collected_at: str | None, time_zone: str | None, languages: str | None, account_id: str | None, strict: bool,
    quiet: bool, jobs: int, files: tuple[str, ...],
) -> None:  # fmt: skip
    """Normalize FILE... (plain or gzip; - for stdin) to one record per line (JSON) on stdout.

    One record per key: a repeated observation (a retried page, an overlapping export) keeps the latest
    (edit time, then collection time, then input order). Each file is read on its own: a file that cannot
    be read (truncated, corrupt, another format) is reported and the others are still written; the exit
    status is 1 when a file gave nothing but errors.
    """
    try:
        get_normalizer(fmt)
    except UnknownFormatError as exc:
        _fail(str(exc))
    try:
        options = normalize_options({"timezone": time_zone, "languages": languages, "account_id": account_id})
    except ValueError as exc:
        _fail(str(exc).replace("options.timezone", "--timezone").replace("options.languages", "--languages")
              .replace("options.account_id", "--account-id"))
    collected = None
    if collected_at is not None:
        try:
            collected = parse_instant(collected_at, "--collected-at")
        except InputError as exc:
            _fail(str(exc))
    for path in files:
        if path != "-" and not _readable(path):
            _fail(f"cannot read {path}: no such file or not readable")
    run_id = f"cli-{uuid.uuid4().hex[:12]}"
    deduper = Deduper()
    edits = EditHistories(catalog.catalog().platform_of_format(fmt))  # edit histories of the run: resolved when written
    rejections_file = open(rejections_out, "wb") if rejections_out else None  # noqa: SIM115
    report = _Report(rejections_file)
    try:
        for path in files:
            name = "<stdin>" if path == "-" else path
            context = NormalizeContext(
                tenant=tenant, source=source, method="export", run_id=run_id, collected_at=collected,
                raw_pointer=None if path == "-" else str(Path(path).resolve()), **_file_options(fmt, path, options),
            )  # fmt: skip
            report.start_file()
            records = 0
            try:
                with open_input(path) as stream:
                    for block, rejections in normalize_encoded(fmt, stream, name=name, context=context,
                                                               jobs=jobs or _auto_jobs(path)):
                        for rejection in rejections:
                            report.add(rejection)
                        records += len(block)
                        report.unavailable += block.unavailable
                        edits.merge(block.histories)
                        deduper.add_block(block)
            except OSError as exc:
                report.add(Rejection(name=name, reason=f"cannot read: {exc.strerror or exc}"))
            report.end_file(name, records)
        _write(deduper, relations_out, edits)
    except BrokenPipeError:
        sys.stderr.close()  # downstream closed (e.g. `| head`): not an error of ours
        sys.exit(0)
    finally:
        deduper.close()
        if rejections_file is not None:
            rejections_file.close()
    if not quiet:
        parts = [f"{deduper.unique} records", f"{deduper.duplicates} duplicates dropped", f"{report.errors} malformed"]
        if report.unavailable:
            parts.append(f"{report.unavailable} unavailable (deleted, protected or suspended posts, kept as tombstones)")
        parts += [f"{count} skipped ({reason})" for reason, count in sorted(report.skipped.items())]
        click.echo("crawl-assets normalize: " + ", ".join(parts), err=True)
    if report.unreadable:
        click.echo(f"crawl-assets normalize: nothing could be read from {', '.join(report.unreadable)}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    if strict and report.errors:
        sys.exit(EXIT_BAD_INPUT)


def _file_options(fmt: str, path: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options one file is read with: an export's owner found beside it (an X archive's account.js, as the
    pipeline does for an export source) unless ``--account-id`` named one."""
    owner = catalog.catalog().formats()[fmt].owner_beside
    if owner and path != "-" and "account_id" not in options:
        if account := resolve(owner)(path):
            return {**options, "account_id": account}
    return options


def _auto_jobs(path: str) -> int:
    """``auto_jobs`` of the file's size (stdin: one process)."""
    try:
        size = os.path.getsize(path) if path != "-" else 0
    except OSError:
        size = 0
    return auto_jobs(size)


def _readable(path: str) -> bool:
    try:
        with open(path, "rb"):
            return True
    except OSError:
        return False


def _report(rejection: Rejection) -> None:
    where = f"{rejection.name}:{rejection.line}" if rejection.line is not None else rejection.name
    snippet = rejection.snippet[:120].replace("\n", " ")
    click.echo(f"{where}: {rejection.reason}" + (f" [{snippet}]" if snippet else ""), err=True)


def _write(deduper: Deduper, relations_out: str | None, edits: EditHistories) -> None:
    out = sys.stdout.buffer
    edges_file = open(relations_out, "wb") if relations_out else None  # noqa: SIM115
    try:
        # record lines are the blocks' main payloads, edge lines the side; versions of edited posts are rewritten
        # (a superseded version's edges are dropped: its post's live version has them)
        deduper.write_winners(out, edges_file, rewrite=lambda line: rewritten_line(line, edits.resolve),
                              rewrite_keys=edits.keys() if edits else (),
                              keep_side=lambda line: not is_superseded(orjson.loads(line).get("metadata")))
        out.flush()
    finally:
        if edges_file is not None:
            edges_file.close()


@click.command("schema")
@click.option(
    "--model", type=click.Choice(["record", "edge", "rejection"]), default="record", show_default=True,
    help="Which contract to print.",
)  # fmt: skip
def schema(model: str) -> None:
    """Print the JSON Schema of the normalized record (or edge, or rejection)."""
    document = {
        "record": record_json_schema,
        "edge": lambda: Edge.model_json_schema(mode="serialization"),
        "rejection": lambda: Rejection.model_json_schema(mode="serialization"),
    }[model]()
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


__all__ = ["normalize", "open_input", "schema"]


if __name__ == "__main__":  # `python -m crawl_assets.cli.normalize`: without the other subcommands' imports
    normalize(prog_name="crawl-assets normalize")
