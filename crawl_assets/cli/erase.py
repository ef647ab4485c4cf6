"""``crawl-assets erase``: remove one author's or one source's data from a tenant (lake, edges, index)."""

from __future__ import annotations

import json

import click


@click.command("erase")
@click.option("--tenant", required=True, help="The tenant whose data is erased.")
@click.option("--author", default=None,
              help="The person whose data is erased: PLATFORM:ID, ID being a record's author_id (x:777, "
                   "intercom:user:5f1c), and for Discourse the forum's host too (discourse:HOST:ID). A bare ID is "
                   "used only when one platform (and forum) of the tenant has it; otherwise the candidates are "
                   "listed and nothing is erased.")
@click.option("--author-name", default=None,
              help="A display name or handle: lists the authors and records that carry it and, once confirmed, "
                   "erases each of them (two people may share a name: read the list).")
@click.option("--yes", is_flag=True, help="With --author-name: erase the listed matches without asking.")
@click.option("--source", default=None, help="Source key ({tenant}.{platform}.{name}) whose data is erased.")
@click.option("--legacy-tenant", is_flag=True,
              help="The tenant is named under the earlier rule (e.g. 'acme-', 'a--b'; its registry entries are now "
                   "invalid): erase ALL of its data, lake and indices.")
@click.option("--es-url", default=None, help="Elasticsearch URL (default: $CRAWL_ES_URL; unset: lake only, "
              "then run it again with a cluster before re-indexing).")
def erase(tenant: str, author: str | None, author_name: str | None, yes: bool, source: str | None,
          legacy_tenant: bool, es_url: str | None) -> None:
    """Hard-delete data for a deletion request; records what was erased (without the data)."""
    from crawl_assets import settings
    from crawl_assets.core import names
    from crawl_assets.erasure import Selector
    from crawl_assets.lake import Lake

    lake = Lake(settings.lake_root())
    if legacy_tenant:
        _erase_legacy(lake, tenant, es_url, other=(author, author_name, source))
        return
    try:
        names.check_tenant(tenant)
    except ValueError as exc:
        hint = " (a tenant named under the earlier rule: --legacy-tenant)" if names.is_slug(tenant) else ""
        raise click.UsageError(f"--tenant: {exc}{hint}") from None
    if [author, author_name, source].count(None) != 2:
        raise click.UsageError("give exactly one of --author, --author-name or --source (use --author PLATFORM:ID, "
                               "--author-name NAME or --source KEY)")
    client = _client(es_url)
    try:
        _check_tenant_has_data(lake, tenant, client)
        try:
            if author_name is not None:
                selectors = _by_name(lake, tenant, author_name, yes)
            elif author is not None:
                selectors = [Selector(tenant=tenant, author=_person(lake, client, tenant, author))]
            else:
                selectors = [Selector(tenant=tenant, source=source)]
        except ValueError as exc:
            raise click.UsageError(f"{exc} (use --author PLATFORM:ID, --author-name NAME or --source KEY)") from None
        for selector in selectors:
            _run(lake, client, selector)
    finally:
        if client is not None:
            client.close()
    if client is None:
        click.echo("index not touched: no Elasticsearch configured (set CRAWL_ES_URL or --es-url)", err=True)


def _client(es_url: str | None):
    from crawl_assets import settings

    url = es_url or settings.elasticsearch().url
    if not url:
        return None
    from crawl_assets.index.client import CredentialsInUrl, build_client, client_settings_from_env

    try:
        config = client_settings_from_env(url)
        return build_client(config.pop("hosts"), **config)
    except CredentialsInUrl as exc:
        raise click.UsageError(str(exc)) from None


def _erase_legacy(lake, tenant: str, es_url: str | None, other: tuple) -> None:
    from crawl_assets.erasure.legacy import check_legacy_tenant, erase_legacy_tenant
    from crawl_assets.erasure.log import ErasureKeyError

    if any(v is not None for v in other):
        raise click.UsageError("--legacy-tenant erases the whole tenant: give no --author, --author-name or --source")
    try:
        check_legacy_tenant(tenant)
    except ValueError as exc:
        raise click.UsageError(f"--tenant: {exc}") from None
    client = _client(es_url)
    try:
        report = erase_legacy_tenant(lake, client, tenant)
    except ErasureKeyError as exc:
        raise click.ClickException(f"{exc}; nothing was erased") from None
    finally:
        if client is not None:
            client.close()
    click.echo(json.dumps(report.as_dict(), indent=2))
    if client is None:
        click.echo("index not touched: no Elasticsearch configured (set CRAWL_ES_URL or --es-url, run it again)",
                   err=True)
    click.echo(f"now remove tenant {tenant!r}'s entries from the registry (or re-add them under a valid name)",
               err=True)


def _check_tenant_has_data(lake, tenant: str, client) -> None:
    """A tenant with nothing in the lake is most likely a typo: said loudly; without a cluster to look in
    as well, nothing is erased and nothing logged."""
    if lake.has_tenant_data(tenant):
        return
    click.echo(f"warning: tenant {tenant!r} has no data in the lake {lake.root} (is the name right?)", err=True)
    if client is None:
        raise click.ClickException(f"nothing to erase for tenant {tenant!r}: nothing erased, nothing logged")


def _run(lake, client, selector) -> None:
    from crawl_assets.core.display import shown
    from crawl_assets.erasure import ErasureIncomplete
    from crawl_assets.erasure import erase as run_erasure
    from crawl_assets.erasure.log import ErasureKeyError
    from crawl_assets.locks.shared import SourceBusy

    try:
        report = run_erasure(lake, client, selector)
    except SourceBusy as exc:
        raise click.ClickException(f"{exc}: nothing was erased; run it again when the sync is done") from None
    except ErasureKeyError as exc:
        raise click.ClickException(f"{exc}; nothing was erased") from None
    except ErasureIncomplete as exc:
        click.echo(json.dumps(exc.report.as_dict(), indent=2))
        raise click.ClickException(f"erasure not complete (logged): {exc.report.status}") from None
    click.echo(json.dumps(report.as_dict(), indent=2))
    for release in report.releases:
        click.echo(f"warning: release {release['release_id']} (made {release['created_at']}, {shown(release['path'])}) "
                   f"holds this subject: withdraw it wherever it was shared; new releases leave the subject out",
                   err=True)
    for source, count in sorted(report.records_without_author.items()):
        click.echo(f"warning: {source}: {count} records have no author_id, so --author cannot tell whether they "
                   f"are this person's; check them (crawl-assets erase --author-name NAME lists by name) or erase "
                   f"the whole source with --source {source}", err=True)


def _person(lake, client, tenant: str, text: str):
    """The person ``--author`` names: ``PLATFORM:ID`` (``discourse:HOST:ID``) as written; a bare id only when
    exactly one platform (and forum) of the tenant, in the lake or the index, has it."""
    from elasticsearch import TransportError

    from crawl_assets.erasure.authors import candidates, parse_author

    person = parse_author(text)
    if person is not None:
        return person
    try:
        found = candidates(lake, tenant, text, client)
    except TransportError as exc:  # the cluster is down: the lake's candidates only (the index step will fail, logged)
        click.echo(f"warning: the index could not be searched for author id {text!r} ({type(exc).__name__}): "
                   f"candidates from the lake only", err=True)
        found = candidates(lake, tenant, text)
    if len(found) == 1:
        [person] = found
        click.echo(f"--author {text!r} read as {str(person)!r}: the only platform of tenant {tenant!r} with that "
                   f"author id", err=True)
        return person
    if not found:
        raise ValueError(f"no record of tenant {tenant!r} has author id {text!r}: name the person with their "
                         f"platform, PLATFORM:ID (discourse:HOST:ID); nothing erased")
    listed = "; ".join(f"{person} ({count} records)" for person, count in sorted(found.items()))
    raise ValueError(f"author id {text!r} is held by several people, one per platform or forum: {listed}; name one "
                     f"with --author PLATFORM:ID; nothing erased")


def _by_name(lake, tenant: str, name: str, yes: bool) -> list:
    """The authors (and id-less records) carrying ``name``, listed; confirmed before anything is erased."""
    from crawl_assets.erasure import Selector
    from crawl_assets.erasure.names import records_named

    authors, keyless = records_named(lake, tenant, name)
    if not authors and not keyless:
        raise click.ClickException(f"no record of tenant {tenant!r} carries the name {name!r}; nothing erased")
    click.echo(f"records of tenant {tenant!r} named {name!r}:", err=True)
    for person, (handle, count) in sorted(authors.items()):
        click.echo(f"  --author {str(person):<40} {handle!r:<24} {count} records", err=True)
    if keyless:
        click.echo(f"  records without an author id: {len(keyless)} ({', '.join(sorted(keyless)[:5])}...)", err=True)
    if not yes and not click.confirm("Erase all of the above?", default=False, err=True):
        raise click.ClickException("nothing erased")
    selectors = [Selector(tenant=tenant, author=person) for person in sorted(authors)]
    return selectors + ([Selector(tenant=tenant, records=tuple(sorted(keyless)))] if keyless else [])
