"""``crawl-assets sources``: register and manage sources in the registry file."""

from __future__ import annotations

import json
from pathlib import Path

import click
from pydantic import ValidationError

from crawl_assets.cli.add_checks import refusal, unset_credentials
from crawl_assets.cli.common import fail, open_registry, registry_option, save_registry
from crawl_assets.core.display import shown, shown_json
from crawl_assets.registry import SourceEntry, SourceKind, SourceStatus
from crawl_assets.registry.models import PLATFORMS, find_secret


@click.group()
def sources() -> None:
    """Register, list and manage sources (the registry file users may also edit by hand)."""


def _parse_option(values: tuple[str, ...]) -> dict[str, str | int | bool]:
    out: dict[str, str | int | bool] = {}
    for item in values:
        if "=" not in item:
            fail(f"--option {item!r}: expected KEY=VALUE")
        k, v = item.split("=", 1)
        out[k] = int(v) if v.isdigit() else {"true": True, "false": False}.get(v.lower(), v)
    return out


@sources.command("add")
@click.option("--platform", type=click.Choice(PLATFORMS, case_sensitive=False), required=True)
@click.option("--kind", type=click.Choice([k.value for k in SourceKind], case_sensitive=False), required=True)
@click.option("--identifier", required=True, help="Channel username/id, query, forum URL, app package, or export file path.")
@click.option("--name", required=True, help="Short slug, unique per tenant and platform.")
@click.option("--tenant", default="default", show_default=True,
              help="Who the data belongs to (a slug); part of the partition key and of index names.")
@click.option("--credential", default=None, help="Name of a credential held by the platform's resource (never the secret).")
@click.option("--interval-minutes", type=int, default=None,
              help="Minimum time between syncs (default 60).")
@click.option("--priority", type=int, default=None,
              help="-100..100; higher is synced first when many sources are due (default 0).")
@click.option("--history-horizon-days", type=int, default=None,
              help="How far back the first sync and history backfill go (default: everything the API gives).")
@click.option("--refresh-window", type=int, default=None,
              help="Newest items re-read each sync for edits, counters and deletions "
              "(default per platform: Telegram 200, X 0 because X bills every read).")
@click.option("--option", "options", multiple=True,
              help="Platform option KEY=VALUE (repeatable), e.g. format=x-archive; see docs/sources/<platform>.md.")
@registry_option
def add(platform, kind, identifier, name, tenant, credential, interval_minutes, priority, history_horizon_days,
        refresh_window, options, registry_path) -> None:
    """Add a source; its partition appears at the registry sensor's next tick."""
    reg = open_registry(registry_path)
    policy = {k: v for k, v in {
        "interval_minutes": interval_minutes, "priority": priority, "history_horizon_days": history_horizon_days,
        "refresh_window": refresh_window,
    }.items() if v is not None}
    register(reg, {"name": name, "tenant": tenant, "platform": platform, "kind": kind, "identifier": identifier,
                   "credential": credential, "policy": policy, "options": _parse_option(options)})


def register(reg, data: dict) -> SourceEntry:  # noqa: ANN001 - an open Registry
    """Validate ``data`` as a new source (no secret in it, nothing that would certainly fail), add it to ``reg``,
    save, and say so (and which credential variables it still needs); a clean error otherwise."""
    name = data["name"]
    secret = find_secret(data)
    if secret:
        fail(f"source {name!r}: field '{secret[0]}': {secret[1]}")
    try:
        entry = SourceEntry.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or "(entry)"
        fail(f"source {name!r}: field '{field}': {err['msg'].removeprefix('Value error, ')}")
    refused = refusal(entry, reg, data["options"])
    if refused:
        fail(f"source {name!r}: {refused}")
    try:
        reg.add(entry)
    except ValueError as exc:
        fail(str(exc))
    save_registry(reg)
    click.echo(shown(f"added {entry.key} to {reg.path}"))
    unset = unset_credentials(entry)
    if unset:
        click.echo(shown(f"warning: {entry.key} cannot sync until {' and '.join(unset)} {'is' if len(unset) == 1 else 'are'} "
                         "set (in the environment of the code location and of these commands; see "
                         f"docs/sources/{entry.platform}.md): its first sync would pause it"), err=True)
    return entry


@sources.command("list")
@click.option("--platform", type=click.Choice(PLATFORMS, case_sensitive=False), default=None)
@click.option("--tenant", default=None)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@registry_option
def list_(platform, tenant, as_json, registry_path) -> None:
    """List sources; invalid entries are reported on stderr and make the exit code 2."""
    reg = open_registry(registry_path, strict=False)
    rows = [e for e in reg.entries if (platform is None or e.platform == platform) and (tenant is None or e.tenant == tenant)]
    if not as_json:
        click.echo(f"{'source':<48} {'kind':<16} {'status':<10} identifier")
    for e in rows:
        if as_json:
            click.echo(shown_json(json.dumps({"key": e.key, **e.model_dump(mode="json")}, ensure_ascii=False)))
        else:
            status = e.status.value + (f" ({e.status_reason})" if e.status_reason else "")
            click.echo(shown(f"{e.key:<48} {e.kind.value:<16} {status:<10} {e.identifier}"))
    for err in reg.errors:
        click.echo(f"error: {err}", err=True)
    if reg.errors:
        raise SystemExit(2)


@sources.command("show")
@click.argument("source")
@registry_option
def show(source, registry_path) -> None:
    """Show one source (by key, or by name when unique)."""
    reg = open_registry(registry_path, strict=False)
    try:
        entry = reg.get(source)
    except KeyError as exc:
        fail(exc.args[0])
    click.echo(shown_json(json.dumps({"key": entry.key, **entry.model_dump(mode="json")}, indent=2, ensure_ascii=False)))
    if entry.paused:
        click.echo(shown(f"paused: {entry.status_reason or 'no reason given'} (resume: crawl-assets sources resume {entry.key})"))
    last = _last_sync(entry.key)
    if last:
        click.echo(last)


def _last_sync(key: str) -> str:
    """The source's last sync from the instance, when one is configured and reachable."""
    from crawl_assets import settings

    if not (settings.dagster_home() / "dagster.yaml").exists():
        return ""
    settings.use_dagster_home()
    try:
        import time

        import dagster as dg

        from crawl_assets.orchestration.monitoring.health import load_health

        with dg.DagsterInstance.get() as instance:
            h = load_health(instance, [key])[key]
    except Exception as exc:  # the registry is still shown when the instance is down
        return f"last sync: unknown (instance unavailable: {type(exc).__name__})"
    if not h.last_attempt:
        return "last sync: never"
    when = lambda t: time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(t)) if t else "never"  # noqa: E731
    line = shown(f"last success: {when(h.last_success)}; last attempt: {when(h.last_attempt)}; run {h.last_run_id or '-'}")
    if h.failures:
        line += "\n" + shown(f"failing: {h.failures} in a row; last error: {h.last_error}")
    return line


def _set_status(source: str, status: SourceStatus, reason: str | None, registry_path: Path | str | None) -> None:
    reg = open_registry(registry_path, strict=False)
    try:
        entry = reg.set_status(source, status, reason)
    except KeyError as exc:
        fail(exc.args[0])
    save_registry(reg)
    click.echo(shown(f"{entry.key}: {status.value}"))


@sources.command("pause")
@click.argument("source")
@click.option("--reason", default="paused by user")
@registry_option
def pause(source, reason, registry_path) -> None:
    """Stop scheduling a source (its data and partition stay)."""
    _set_status(source, SourceStatus.paused, reason, registry_path)


@sources.command("resume")
@click.argument("source")
@registry_option
def resume(source, registry_path) -> None:
    """Schedule a paused source again."""
    _set_status(source, SourceStatus.active, None, registry_path)


@sources.command("remove")
@click.argument("source")
@registry_option
def remove(source, registry_path) -> None:
    """Remove a source from the registry; its partition is retired at the sensor's next tick.
    Collected data stays in the lake until erased (`crawl-assets erase`)."""
    reg = open_registry(registry_path, strict=False)
    try:
        entry = reg.remove(source)
    except KeyError as exc:
        fail(exc.args[0])
    save_registry(reg)
    click.echo(shown(f"removed {entry.key} from {reg.path}"))
