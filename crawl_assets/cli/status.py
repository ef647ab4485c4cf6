"""``crawl-assets status``: one line per source (state, last success, lag, last error) from the instance;
with no error to show, the problem of the source's last normalization (its ``no_failed_batches`` check), which
makes an otherwise ok source ``degraded``."""

import json
import time
from dataclasses import replace

import click

from crawl_assets.cli.common import fail, registry_option
from crawl_assets.core.display import shown, shown_json
from crawl_assets.registry import RegistryFileError, SourceKind
from crawl_assets.registry.models import PLATFORMS

# monitoring.status.classify; "degraded": otherwise ok, but its last normalization had a problem
STATES = ("ok", "degraded", "late", "failing", "waiting", "running", "paused", "never")
REASON_WIDTH = 100


def _ago(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds:.0f}s"


def shorten(text: str, width: int = REASON_WIDTH) -> str:
    """The first line of ``text``, cut at a word boundary with "…" when longer than ``width``."""
    line = text.splitlines()[0] if text else ""
    if len(line) <= width:
        return line
    cut = line[: width - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip(" ,;:") + "…"


@click.command("status")
@click.option("--platform", type=click.Choice(PLATFORMS, case_sensitive=False), default=None, help="Only this platform's sources.")
@click.option("--state", "states", multiple=True, type=click.Choice(STATES),
              help="Only sources in this state (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@registry_option
def status(platform, states, as_json, registry_path) -> None:
    """Per-source sync state from the Dagster instance ($DAGSTER_HOME) and the registry.

    Invalid registry entries are reported on stderr (file, line, entry, field) and make the exit code 2."""
    import dagster as dg

    from crawl_assets import settings
    from crawl_assets.orchestration.monitoring.normalization import normalization_problems
    from crawl_assets.orchestration.monitoring.status import source_statuses
    from crawl_assets.registry.store import registry_view

    try:
        reg, _ = registry_view(registry_path or settings.registry_path())
    except RegistryFileError as exc:
        fail(str(exc))
    entries = [e for e in reg.entries if platform is None or e.platform == platform]
    settings.use_dagster_home()  # the instance `crawl-assets demo` uses
    with dg.DagsterInstance.get() as instance:
        rows = source_statuses(instance, entries)
        problems = normalization_problems(instance, [r.entry for r in rows if r.state != "never"])
    rows = [replace(r, state="degraded") if r.state == "ok" and r.entry.key in problems else r for r in rows]
    rows = [r for r in rows if not states or r.state in states]
    now = time.time()
    if not as_json:
        click.echo(f"{'source':<44} {'state':<8} {'last success':<17} {'lag':>7} {'fails':>5}  last error / reason")
    for r in rows:
        h = r.health
        reason = r.entry.status_reason if r.entry.paused else h.last_error
        problem = problems.get(r.entry.key)
        export = r.entry.kind is SourceKind.export_file
        if as_json:
            click.echo(shown_json(json.dumps({"key": r.entry.key, "state": r.state, "last_success": h.last_success,
                                   "lag_seconds": None if export else r.lag_seconds, "failures": h.failures,
                                   "last_error": h.last_error or None, "paused_reason": r.entry.status_reason,
                                   "retry_after": h.retry_after, "last_run_id": h.last_run_id or None,
                                   "normalization_problem": problem},
                                  ensure_ascii=False)))
            continue
        last = _ago(now - h.last_success) + " ago" if h.last_success else "never"
        if export:  # an export's newest item is as old as the file, not late: say when it was imported instead
            last = f"imported {last}" if h.last_success else "never imported"
        click.echo(f"{r.entry.key:<44} {r.state:<8} {last:<17} {'-' if export else _ago(r.lag_seconds):>7} {h.failures:>5}  "
                   f"{shorten(shown(reason or (f'normalization: {problem}' if problem else '')))}")
    if not as_json:
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.state] = counts.get(r.state, 0) + 1
        invalid = f", {len(reg.errors)} invalid registry entries (not shown)" if reg.errors else ""
        click.echo(f"{len(rows)} sources: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + invalid)
    for err in reg.errors:
        click.echo(f"error: {err}", err=True)
    if reg.errors:
        raise SystemExit(2)
