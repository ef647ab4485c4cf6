"""``crawl-assets es``: set up the cluster (and migrate existing indices), reindex, replay dead letters,
show index figures.

The cluster comes from ``--url`` or ``CRAWL_ES_URL``; credentials only from the environment
(``CRAWL_ES_API_KEY`` or ``CRAWL_ES_USERNAME``/``CRAWL_ES_PASSWORD``), never from flags.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import click
from elastic_transport import TransportError
from elasticsearch import ApiError, Elasticsearch

from crawl_assets import settings
from crawl_assets.cli.common import fail, open_registry, registry_option
from crawl_assets.index.indices import index_stats, setup_indices
from crawl_assets.index.client import CredentialsInUrl, build_client, client_settings_from_env
from crawl_assets.index.legacy_names import MigrationError, migrate_legacy_indices
from crawl_assets.index.naming import FAMILIES, logical_name, parse_index
from crawl_assets.index.outcomes import pending_files
from crawl_assets.index.replay import replay_deadletters

url_option = click.option("--url", default=None, help="Cluster URL(s), comma-separated (default: $CRAWL_ES_URL).")
lake_option = click.option("--lake", default=None, help="Lake root (default: $CRAWL_LAKE or $DAGSTER_HOME/lake).")


def _redact(url: str) -> str:
    return re.sub(r"//[^/@]+@", "//***@", url)


@contextlib.contextmanager
def _client(url: str | None) -> Iterator[Elasticsearch]:
    # The client straight from the settings, not through the Dagster resource: these commands never load Dagster.
    try:
        config = client_settings_from_env(url)
    except CredentialsInUrl as exc:
        fail(str(exc))
    hosts = config.pop("hosts")
    where = ", ".join(_redact(h) for h in hosts)
    try:
        with build_client(hosts, **config) as client:
            yield client
    except ApiError as exc:
        fail(f"Elasticsearch at {where} answered {exc.status_code} {exc.error}")
    except TransportError as exc:
        fail(f"cannot reach Elasticsearch at {where}: {type(exc).__name__}")


def _retention(values: tuple[str, ...]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in values:
        tenant, sep, months = item.partition("=")
        if not sep or not months.isdigit() or int(months) < 1:
            fail(f"--retention {item!r}: expected TENANT=MONTHS with MONTHS >= 1")
        out[tenant] = int(months)
    return out


@click.group()
def es() -> None:
    """Elasticsearch: templates, aliases, retention, dead-letter replay, index figures."""


@es.command("setup")
@click.option("--tenant", "tenants", multiple=True, help="Tenant to set up (repeatable; default: all in the registry).")
@click.option("--retention", multiple=True, help="TENANT=MONTHS: delete that tenant's months older than this.")
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@url_option
@registry_option
def setup(tenants: tuple[str, ...], retention: tuple[str, ...], dry_run: bool, url: str | None,
          registry_path: Path | str | None) -> None:
    """Put index templates, rename indices of the earlier naming scheme, give every tenant's indices their
    read alias and the template's compatible mapping changes, name the changes that need a reindex, delete
    months past retention."""
    keep = _retention(retention)
    chosen = set(tenants) or {e.tenant for e in open_registry(registry_path, strict=False).entries} or {"default"}
    chosen |= set(keep)
    with _client(url) as client:
        try:
            renamed = migrate_legacy_indices(client, sorted(chosen), dry_run=dry_run)
            report = setup_indices(client, sorted(chosen), keep, dry_run=dry_run)
        except (ValueError, MigrationError) as exc:
            fail(str(exc))
    verb = "would " if dry_run else ""
    for line in renamed.renamed:
        click.echo(f"{verb}rename (earlier naming scheme): {line}")
    for name in renamed.skipped:
        click.echo(f"error: {name}: its tenant name is no longer valid; not renamed (erase that tenant's data: "
                   f"crawl-assets erase --tenant TENANT --legacy-tenant)", err=True)
    click.echo(f"templates: {', '.join(report.templates)}" + (" (not written: dry run)" if dry_run else ""))
    for line in report.aliases_added:
        click.echo(f"{verb}add alias: {line}")
    for name in report.deleted:
        click.echo(f"{verb}delete (retention): {name}")
    for line in report.migration.updated:
        click.echo(f"{verb}update mapping in place: {line}")
    for logical in report.migration.in_progress:
        click.echo(f"reindex not finished: {logical} (run crawl-assets es reindex again to finish it)")
    for item in report.migration.needs_reindex:
        click.echo(f"needs reindex: {item}")
    for family, tenant in sorted({(i.family, i.tenant) for i in report.migration.needs_reindex}):
        click.echo(f"  -> crawl-assets es reindex --tenant {tenant} --family {family}")
    click.echo(f"tenants: {', '.join(sorted(chosen))}")


@es.command("reindex")
@click.option("--tenant", required=True)
@click.option("--family", type=click.Choice(FAMILIES), default="records", show_default=True)
@click.option("--index", "names", multiple=True, help="Logical index to reindex (repeatable; default: every index of "
              "the tenant and family that es setup names, and any unfinished reindex).")
@url_option
def reindex_cmd(tenant: str, family: str, names: tuple[str, ...], url: str | None) -> None:
    """Move indices to a new generation built from the current template, without downtime or lost writes."""
    from crawl_assets.index.reindex import reindex

    with _client(url) as client:
        try:
            if not names:
                plan = setup_indices(client, [tenant], dry_run=True).migration
                names = tuple(dict.fromkeys([*(logical_name(i.index) for i in plan.needs_reindex
                                               if i.family == family), *plan.in_progress]))
            for name in names:
                parsed = parse_index(name)
                if not parsed or parsed[:2] != (family, tenant):
                    fail(f"{name} is not a {family} index of tenant {tenant}")
                done = reindex(client, name, family, tenant)
                click.echo(f"{name}: now {done.new_index}; {done.copied} copied, {done.newer_kept} newer kept, "
                           f"removed {', '.join(done.removed) or 'nothing'}")
        except ValueError as exc:
            fail(str(exc))
    if not names:
        click.echo("nothing needs a reindex")


@es.command("replay")
@click.argument("paths", nargs=-1)
@click.option("--family", type=click.Choice(FAMILIES), default=None)
@click.option("--tenant", default=None)
@url_option
@lake_option
def replay(paths: tuple[str, ...], family: str | None, tenant: str | None, url: str | None, lake: str | None) -> None:
    """Re-index dead-lettered documents (all pending files, or the given PATHS); exit 1 if some fail again."""
    root = lake or settings.lake_root()
    with _client(url) as client:
        report = replay_deadletters(client, root, family=family, tenant=tenant, paths=list(paths) or None)
    if not report.files:
        click.echo("no pending dead letters")
        return
    for f in report.files:
        s = f.stats
        click.echo(f"{f.path}: {s.docs} replayed, {s.created} created, {s.updated} updated, {s.noop} no-op, "
                   f"{s.failed} failed again" + (f" -> {s.deadletter_path}" if s.deadletter_path else ""))
    for bad in report.bad_lines:
        click.echo(f"error: {bad}", err=True)
    if report.still_failed or report.bad_lines:
        raise SystemExit(1)


@es.command("stats")
@click.option("--tenant", default=None)
@click.option("--family", type=click.Choice(FAMILIES), default=None)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per index.")
@url_option
@lake_option
def stats(tenant: str | None, family: str | None, as_json: bool, url: str | None, lake: str | None) -> None:
    """Documents, tombstones and bytes per index; pending dead-letter files."""
    with _client(url) as client:
        rows = index_stats(client, family, tenant)
    waiting = pending_files(lake or settings.lake_root(), family, tenant)
    if as_json:
        for r in rows:
            click.echo(json.dumps(r.__dict__))
        return
    click.echo(f"{'index':<48} {'docs':>10} {'tombstones':>10} {'bytes':>12}")
    for r in rows:
        click.echo(f"{r.index:<48} {r.docs:>10} {r.tombstones:>10} {r.bytes:>12}")
    click.echo(f"{len(rows)} indices, {sum(r.docs for r in rows)} documents; "
               f"{len(waiting)} pending dead-letter file(s)")


@es.command("local")
@click.option("--port", type=int, default=9200, show_default=True, help="The HTTP port, on 127.0.0.1.")
@click.option("--heap", default="512m", show_default=True, help="The JVM heap (-Xms and -Xmx).")
@click.option("--data", "data_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the node keeps its indices between starts (default: $DAGSTER_HOME/elasticsearch; run as "
                   "root, the node runs as nobody, under /var/tmp/crawl-assets-es).")
def local(port: int, heap: str, data_dir: Path | None) -> None:
    """Run a genuine single-node Elasticsearch on 127.0.0.1 for trying, until Ctrl-C or SIGTERM.

    Needs a JDK 17+ and Maven: Maven fetches Elastic's server distribution from Maven Central once (~100 MB
    into ~/.m2), and javac compiles the analysis components our index templates use for it. Not for
    production: one node, no security, loopback only (docker-compose.yml runs a cluster)."""
    import signal

    from crawl_assets.index.local_node.local import LocalNodeError, run_local_node

    def stop(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt  # the same orderly stop as Ctrl-C

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)  # also when a script started this command with SIGINT ignored
    try:
        run_local_node(port, heap, data_dir, say=lambda line: click.echo(line, err=True))
    except LocalNodeError as exc:
        fail(str(exc))
