"""``crawl-assets discover``: the chats a tenant's records name (forwards, ``t.me`` links, mentions) as
candidates, and a person's approval of one into the registry. Nothing is collected from a candidate before.
(``crawl_assets.pipeline.discovery``; the platform's ``DiscoverySpec`` says what its records name.)"""

from __future__ import annotations

import json
from typing import Any

import click
from crawl_assets.cli.common import fail, open_registry, registry_option
from crawl_assets.cli.sources import register
from crawl_assets.core.display import shown, shown_json

tenant_option = click.option("--tenant", default="default", show_default=True, help="Whose records and registry.")
platform_option = click.option("--platform", default=None, help="Default: the one platform with discovery.")


def _discovering() -> list[str]:
    from crawl_assets.core import catalog

    return [p for p, spec in catalog.catalog().specs.items() if spec.discovery is not None]


def _platform(platform: str | None) -> str:
    """``--platform``, or the one platform with discovery when it is not given."""
    found = _discovering()
    if platform is None and len(found) == 1:
        return found[0]
    if platform not in found:
        fail(f"--platform {platform}: platforms with discovery: {', '.join(found) or 'none'}")
    return platform


def _spec(platform: str) -> Any:
    from crawl_assets.core import catalog

    return catalog.spec(_platform(platform)).discovery


def _table(tenant: str, platform: str, refresh: bool) -> dict[str, Any]:
    from crawl_assets import settings
    from crawl_assets.core.catalog import resolve
    from crawl_assets.lake import Lake
    from crawl_assets.core.names import check_tenant
    from crawl_assets.pipeline import discovery

    try:
        check_tenant(tenant)
    except ValueError as exc:
        fail(str(exc))
    lake = Lake(settings.lake_root())
    table = None if refresh else discovery.stored(lake, tenant, platform)
    return table or discovery.refresh(lake, tenant, platform, resolve(_spec(platform).references))


def _registered(registry: Any, tenant: str, platform: str) -> set[str]:
    from crawl_assets.core.catalog import resolve

    candidate_of = resolve(_spec(platform).registered)
    return {c for e in registry.entries if e.tenant == tenant and e.platform == platform
            and (c := candidate_of(e.identifier)) is not None}


@click.group()
def discover() -> None:
    """Chats your collected messages name (forwards, t.me links, mentions), for you to approve as sources."""


@discover.command("list")
@tenant_option
@platform_option
@click.option("--refresh", is_flag=True, help="Compute the candidates from the lake now (else: the last computed).")
@click.option("--all", "show_all", is_flag=True, help="Also the candidates already registered.")
@click.option("--min-count", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@registry_option
def list_(tenant, platform, refresh, show_all, min_count, as_json, registry_path) -> None:
    """List the candidates of one tenant, most named first (none is collected until approved)."""
    from crawl_assets.pipeline.discovery import with_registry

    platform = _platform(platform)
    table = _table(tenant, platform, refresh)
    registry = open_registry(registry_path, strict=False)
    rows = [r for r in with_registry(table, _registered(registry, tenant, platform))
            if r["count"] >= min_count and (show_all or not r["registered"])]
    if as_json:
        for row in rows:
            click.echo(shown_json(json.dumps(row, ensure_ascii=False)))
        return
    click.echo(f"{'candidate':<34} {'count':>6} {'fwd':>5} {'link':>5} {'ment':>5}  {'first seen':<10}  {'last seen':<10}  sources")
    for r in rows:
        mark = " (registered)" if r["registered"] else ""
        label = r["candidate"] if r["label"] == r["candidate"] else f"{r['candidate']} ({r['label']})"
        click.echo(shown(f"{label[:34]:<34} {r['count']:>6} {r['forward']:>5} {r['link']:>5} {r['mention']:>5}  "
                         f"{(r['first_seen'] or '')[:10]:<10}  {(r['last_seen'] or '')[:10]:<10}  "
                         f"{', '.join(r['sources'])}{mark}"))
    click.echo(shown(f"{len(rows)} candidates of tenant {tenant} (computed {table['computed_at'][:19]}Z); approve one with: "
                     f"crawl-assets discover approve <candidate> --tenant {tenant} --name <name>"), err=True)


@discover.command("approve")
@click.argument("candidate")
@click.option("--name", required=True, help="The new source's name (a slug).")
@tenant_option
@platform_option
@click.option("--kind", default=None, help="The kind to register it as (default: the platform's first, e.g. web_channel).")
@click.option("--identifier", default=None, help="What to register (default: the candidate's username; needed for an id).")
@click.option("--credential", default=None, help="The credential of a kind that needs an account.")
@click.option("--interval-minutes", type=int, default=None)
@click.option("--history-horizon-days", type=int, default=None)
@registry_option
def approve(candidate, name, tenant, platform, kind, identifier, credential, interval_minutes, history_horizon_days,
            registry_path) -> None:
    """Register one of the tenant's candidates as a source: collected from its next sync on."""
    from crawl_assets.core.catalog import resolve

    platform = _platform(platform)
    spec = _spec(platform)
    wanted = candidate.strip()
    wanted = wanted.lower() if wanted.startswith("@") else wanted if wanted.startswith("id:") else f"@{wanted.lower()}"
    table = _table(tenant, platform, refresh=False)
    row = next((r for r in table["candidates"] if r["candidate"] == wanted), None)
    if row is None:
        fail(f"{candidate!r} is not a candidate of tenant {tenant} (see: crawl-assets discover list --tenant {tenant} "
             "--refresh)")
    kind = kind or spec.kinds[0]
    if kind not in spec.kinds:
        fail(f"--kind {kind!r}: a candidate is registered as one of {', '.join(spec.kinds)}")
    identifier = identifier or resolve(spec.identifier)(wanted)
    if not identifier:
        fail(f"{wanted} is known by its id only: give --identifier with its username or t.me link")
    policy = {k: v for k, v in {"interval_minutes": interval_minutes,
                                "history_horizon_days": history_horizon_days}.items() if v is not None}
    registry = open_registry(registry_path)
    registered = _registered(registry, tenant, platform)
    if wanted in registered or resolve(spec.registered)(identifier) in registered:
        fail(f"{wanted} is already registered for tenant {tenant}")
    entry = register(registry, {"name": name, "tenant": tenant, "platform": platform, "kind": kind,
                                "identifier": identifier, "credential": credential, "policy": policy, "options": {}})
    click.echo(shown(f"approved {wanted} as {entry.key} ({kind} {identifier}): collected from its next sync"))
