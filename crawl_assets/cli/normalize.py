"""``crawl-assets normalize`` and ``crawl-assets schema``: normalize files users already have, outside Dagster.

Same code as the ``normalized_records``/``relation_edges`` assets. Bad input never produces a traceback:
a malformed item is reported on stderr as ``file:line: reason`` and skipped (``--strict`` turns that into
exit 1); an unknown format or an unreadable file is a one-line error with exit 2.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import uuid
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import click

from crawl_assets.normalize.build import UnknownFormatError
from crawl_assets.normalize.context import NormalizeContext
from crawl_assets.normalize.dedupe import Deduper
from crawl_assets.normalize.formats import FORMATS, get_normalizer
from crawl_assets.normalize.parallel import LINE_FORMATS, normalize_encoded
from crawl_assets.schema.record import Edge, Rejection, record_json_schema

EXIT_BAD_INPUT = 1
MAX_AUTO_JOBS = 2  # the default: two processes keep the peak RSS under 150 MiB
AUTO_JOBS_MIN_BYTES = 16 << 20
EXIT_USAGE = 2
_GZIP_MAGIC = b"\x1f\x8b"
_BUFFER = 1 << 20  # API pages are ~1 MB lines: a large buffer halves the cost of splitting them


class _Unreadable(Exception):
    """An input file that cannot be read at all (missing, permission, corrupt compression)."""


@contextmanager
def open_input(path: str) -> Iterator[IO[bytes]]:
    """A binary stream of ``path`` (``-`` is stdin); gzip input is recognized by its magic bytes."""
    if path == "-":
        yield sys.stdin.buffer
        return
    try:
        handle = open(path, "rb", buffering=_BUFFER)  # noqa: SIM115 - closed below
    except OSError as exc:
        raise _Unreadable(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if handle.read(2) == _GZIP_MAGIC:
            handle.seek(0)
            with gzip.GzipFile(fileobj=handle) as unzipped:
                yield unzipped  # type: ignore[misc]
        else:
            handle.seek(0)
            yield handle
    finally:
        handle.close()


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    click.echo(f"crawl-assets normalize: {message}", err=True)
    sys.exit(code)


@click.command("normalize")
@click.option("--format", "fmt", required=True, metavar="FORMAT", help=f"Input format: {', '.join(FORMATS)}.")
@click.option("--tenant", default="default", show_default=True, help="Tenant the records belong to.")
@click.option("--source", default="cli", show_default=True, help="Source name recorded in provenance.")
@click.option("--relations-out", type=click.Path(dir_okay=False, writable=True), help="Write edges (JSON lines) here.")
@click.option("--strict", is_flag=True, help="Exit 1 when any input item was malformed.")
@click.option("--quiet", "-q", is_flag=True, help="Only errors on stderr, no summary.")
@click.option(
    "--jobs", "-j", type=click.IntRange(min=0), default=0, show_default=True,
    help=f"Processes normalizing line formats ({', '.join(sorted(LINE_FORMATS))}), this one included; 0: one "
    f"per CPU, at most {MAX_AUTO_JOBS} (peak RSS stays under 150 MiB), for inputs over 16 MiB, else 1. Each "
    "process beyond the first adds ~60 MiB; the gain depends on the second core being free.",
)  # fmt: skip
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
def normalize(
    fmt: str, tenant: str, source: str, relations_out: str | None, strict: bool, quiet: bool, jobs: int,
    files: tuple[str, ...],
) -> None:  # fmt: skip
    """Normalize FILE... (plain or gzip; - for stdin) to one record per line (JSON) on stdout.

    One record per key: a repeated observation (a retried page, an overlapping export) keeps the latest
    (edit time, then collection time, then input order).
    """
    try:
        get_normalizer(fmt)
    except UnknownFormatError as exc:
        _fail(str(exc))
    for path in files:
        if path != "-" and not _readable(path):
            _fail(f"cannot read {path}: no such file or not readable")
    run_id = f"cli-{uuid.uuid4().hex[:12]}"
    deduper = Deduper()
    errors = 0
    skipped: Counter[str] = Counter()
    try:
        for path in files:
            name = "<stdin>" if path == "-" else path
            context = NormalizeContext(
                tenant=tenant, source=source, method="export", run_id=run_id,
                raw_pointer=None if path == "-" else str(Path(path).resolve()),
            )  # fmt: skip
            workers = jobs or _auto_jobs(path)
            try:
                with open_input(path) as stream:
                    for block, rejections in normalize_encoded(fmt, stream, name=name, context=context, jobs=workers):
                        for rejection in rejections:
                            if rejection.error:
                                errors += 1
                                _report(rejection)
                            else:
                                skipped[rejection.reason] += 1
                        deduper.add_block(block)
            except (_Unreadable, OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
                _fail(str(exc) if isinstance(exc, _Unreadable) else f"cannot read {name}: {exc}")
        _write(deduper, relations_out)
    except BrokenPipeError:
        sys.stderr.close()  # downstream closed (e.g. `| head`): not an error of ours
        sys.exit(0)
    finally:
        deduper.close()
    if not quiet:
        parts = [f"{deduper.unique} records", f"{deduper.duplicates} duplicates dropped", f"{errors} malformed"]
        parts += [f"{count} skipped ({reason})" for reason, count in sorted(skipped.items())]
        click.echo("crawl-assets normalize: " + ", ".join(parts), err=True)
    if strict and errors:
        sys.exit(EXIT_BAD_INPUT)


def _auto_jobs(path: str) -> int:
    """One worker per CPU (capped) for inputs big enough to pay for starting them, else one."""
    try:
        size = os.path.getsize(path) if path != "-" else 0
    except OSError:
        size = 0
    return min(os.cpu_count() or 1, MAX_AUTO_JOBS) if size >= AUTO_JOBS_MIN_BYTES else 1


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


def _write(deduper: Deduper, relations_out: str | None) -> None:
    out = sys.stdout.buffer
    edges_file = open(relations_out, "wb") if relations_out else None  # noqa: SIM115
    try:
        deduper.write_winners(out, edges_file)  # record lines are the blocks' main payloads, edge lines the side
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
