"""``crawl-assets release``: freeze a query of a tenant's records into a package (``create``), check a package
against its manifest (``verify``), bring one into a tenant (``import``), re-fetch its ids (``hydrate``).
See docs/RELEASES.md."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import click

from crawl_assets.registry.models import PLATFORMS


def _instant(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.UsageError(f"{option}: not an ISO 8601 date or time: {value!r}") from None
    if when.tzinfo is None:
        raise click.UsageError(f"{option}: give a time zone (2026-03-01T00:00:00Z)")
    return when


@click.group("release")
def release() -> None:
    """Dataset releases: a query frozen into a citable, verifiable package."""


@release.command("create")
@click.option("--tenant", required=True, help="Whose records.")
@click.option("--out", required=True, metavar="DIR",
              help="A new folder under $CRAWL_RELEASE_ROOT/TENANT (default root: $DAGSTER_HOME/releases).")
@click.option("--platform", "platforms", multiple=True, type=click.Choice(PLATFORMS, case_sensitive=False))
@click.option("--source", "sources", multiple=True, help="A source name or key (repeatable).")
@click.option("--lang", "langs", multiple=True, help="ISO 639-1 language (repeatable).")
@click.option("--kind", "kinds", multiple=True, help="post, reply, message, review, ... (repeatable).")
@click.option("--author", "authors", multiple=True, help="An author id or handle (repeatable).")
@click.option("--hashtag", "hashtags", multiple=True, help="A hashtag, with or without '#' (repeatable).")
@click.option("--mention", "mentions", multiple=True, help="A mentioned handle (repeatable).")
@click.option("--since", default=None, help="Created at or after this instant (ISO 8601 with a zone).")
@click.option("--until", default=None, help="Created before this instant (ISO 8601 with a zone).")
@click.option("--deleted", type=click.Choice(["exclude", "include", "only"]), default="exclude", show_default=True)
@click.option("--dehydrate", multiple=True, type=click.Choice(PLATFORMS, case_sensitive=False),
              help="Release this platform's records as ids only (X always is: its terms say so).")
@click.option("--pseudonymize", is_flag=True,
              help="Replace author ids by keyed hashes (key: the file $CRAWL_RELEASE_KEY_FILE) and drop handles.")
def create(tenant: str, out: str, platforms: tuple[str, ...], sources: tuple[str, ...], langs: tuple[str, ...],
           kinds: tuple[str, ...], authors: tuple[str, ...], hashtags: tuple[str, ...], mentions: tuple[str, ...],
           since: str | None, until: str | None, deleted: str, dehydrate: tuple[str, ...], pseudonymize: bool) -> None:
    """Write a release of TENANT's records (from the lake; no Elasticsearch needed)."""
    from crawl_assets import settings
    from crawl_assets.erasure.log import ErasureKeyError, key_from_file
    from crawl_assets.query.filters import RecordFilter
    from crawl_assets.lake import Lake
    from crawl_assets.release import ReleaseQuery, create_release
    from crawl_assets.release.build import ReleaseRefused

    lake = Lake(settings.lake_root())
    try:
        flt = RecordFilter(platforms=tuple(p.lower() for p in platforms), sources=sources, langs=langs, kinds=kinds,
                           authors=authors, hashtags=hashtags, mentions=mentions, start=_instant(since, "--since"),
                           end=_instant(until, "--until"), deleted=deleted)  # type: ignore[arg-type]
        query = ReleaseQuery(tenant, flt, tuple(sorted({p.lower() for p in dehydrate})), pseudonymize)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    key = None
    try:
        if pseudonymize and (path := settings.release_key_file()) is not None:
            key = key_from_file(path, lake, what="the release key", env="CRAWL_RELEASE_KEY_FILE", create=False)
        summary = create_release(lake, query, out, pseudonym_key=key)
    except (ReleaseRefused, ErasureKeyError) as exc:
        raise click.ClickException(f"{exc}; no release written") from None
    click.echo(json.dumps({"release_id": summary.release_id, "path": str(summary.path), "records": summary.records,
                           "ids_only": summary.ids_only, "edges": summary.edges,
                           "left_out_as_erased": summary.excluded_erased}, indent=2))


@release.command("verify")
@click.argument("folder", type=click.Path(path_type=Path))
def verify(folder: Path) -> None:
    """Check a release folder against its manifest: exit 1 naming each file that differs."""
    from crawl_assets.core.display import shown
    from crawl_assets.release import PackageInvalid, verify_package

    try:
        release_id, problems = verify_package(folder)
    except PackageInvalid as exc:
        raise click.ClickException(shown(str(exc))) from None
    for problem in problems:
        click.echo(f"{shown(folder)}: {shown(problem)}", err=True)
    if problems:
        sys.exit(1)
    click.echo(f"{release_id}: every file matches the manifest")


def _from_import_root(folder: Path, tenant: str, verb: str) -> Path:
    """``folder`` under TENANT's import root (the one place a package is read from), or a usage error."""
    import os

    from crawl_assets import settings
    from crawl_assets.core import names
    from crawl_assets.core.display import shown

    try:
        root = (settings.import_root() / names.check_tenant(tenant)).resolve()
    except ValueError as exc:
        raise click.UsageError(f"--tenant: {exc}") from None
    path = Path(os.path.normpath(root / folder))
    if os.path.commonpath([root, path]) != str(root) or path == root:
        raise click.UsageError(f"{shown(folder)}: a release is {verb} from under {root} (copy it there; "
                               f"CRAWL_IMPORT_ROOT moves the root)")
    return path


@release.command("import")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--tenant", required=True, help="The tenant the records join.")
def import_(folder: Path, tenant: str) -> None:
    """Import a release folder (under $CRAWL_IMPORT_ROOT/TENANT) into TENANT's records."""
    from crawl_assets import settings
    from crawl_assets.core.display import shown
    from crawl_assets.erasure.log import ErasureKeyError
    from crawl_assets.lake import Lake
    from crawl_assets.release import PackageInvalid, import_release

    path = _from_import_root(folder, tenant, "imported")
    try:
        report = import_release(Lake(settings.lake_root()), tenant, path)
    except (PackageInvalid, ErasureKeyError) as exc:
        raise click.ClickException(shown(str(exc))) from None
    click.echo(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))


@release.command("hydrate")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--tenant", required=True, help="The tenant the hydrated records join.")
@click.option("--credential", default=None, help="Name of the platform credential to fetch with (default: the tenant's).")
@click.option("--no-sync", is_flag=True, help="Register the hydration sources and report only; they sync later "
              "(crawl-assets sync, or the scheduler).")
def hydrate(folder: Path, tenant: str, credential: str | None, no_sync: bool) -> None:
    """Re-fetch a release's ids-only entries (under $CRAWL_IMPORT_ROOT/TENANT) through the platforms' id_list
    sources, then report per id: found, gone (with the platform's reason) or pending. Exits 1 when a sync failed."""
    from crawl_assets import settings
    from crawl_assets.cli.common import open_registry
    from crawl_assets.cli.sources import register
    from crawl_assets.cli.sync import sync_now
    from crawl_assets.core.display import shown
    from crawl_assets.lake import Lake
    from crawl_assets.release import PackageInvalid
    from crawl_assets.release.hydration import IDS_FILE, hydration_report, plan_hydration

    path = _from_import_root(folder, tenant, "hydrated")
    try:
        plan = plan_hydration(path)
    except PackageInvalid as exc:
        raise click.ClickException(shown(str(exc))) from None
    identifier = str((path / IDS_FILE).relative_to((settings.import_root() / tenant).resolve()))
    failures: list[str] = []
    for platform in plan.hydratable():
        reg = open_registry(None, strict=False)
        key = f"{tenant}.{platform}.{plan.source_name()}"
        entry = next((e for e in reg.entries if e.key == key), None)
        if entry is None:
            entry = register(reg, plan.entry(tenant, platform, identifier, credential))
        if not no_sync:
            failed, _ = sync_now(entry)
            if failed:
                failures.append(failed)
                click.echo(f"error: {shown(failed)}", err=True)
    report = hydration_report(Lake(settings.lake_root()), tenant, plan)
    click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    if failures:
        sys.exit(1)
