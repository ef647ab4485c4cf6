"""``crawl-assets api``: serve the query API and manage its keys (docs/API.md)."""

from __future__ import annotations

import click

from crawl_assets.cli.common import fail


@click.group()
def api() -> None:
    """The query and analysis API: search, aggregations, threads, authors, networks, exports."""


@api.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on (put TLS in front).")
@click.option("--port", default=8090, show_default=True, type=int)
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Worker processes (rate limits are per worker).")
@click.option("--rate", "rate_per_minute", default=600, show_default=True, type=click.IntRange(1, 100_000),
              help="Requests per minute per key (a key's own rate wins).")
@click.option("--es-timeout", default=30.0, show_default=True, type=click.FloatRange(1, 600),
              help="Seconds one Elasticsearch request may take.")
def serve(host: str, port: int, workers: int, rate_per_minute: int, es_timeout: float) -> None:
    """Serve the API on uvicorn. Elasticsearch: CRAWL_ES_URL (+ CRAWL_ES_API_KEY or USERNAME/PASSWORD);
    keys: the Dagster instance's database (DAGSTER_HOME, or DAGSTER_PG_URL / DAGSTER_PG_*)."""

    from crawl_assets import settings

    # Before anything loads pyarrow (the Elasticsearch client does): Arrow's default allocator (mimalloc) keeps
    # the pages a Parquet export freed; the system allocator returns them.
    settings.export_default(ARROW_DEFAULT_MEMORY_POOL="system")
    import uvicorn

    from crawl_assets.index.client import CredentialsInUrl

    try:
        from crawl_assets.api.server import check_settings
        check_settings()
    except (CredentialsInUrl, ValueError) as exc:
        fail(str(exc))
    settings.export(CRAWL_API_RATE=str(rate_per_minute), CRAWL_API_ES_TIMEOUT=str(es_timeout))  # for the workers
    uvicorn.run("crawl_assets.api.server:app", factory=True, host=host, port=port, workers=workers,
                log_level="info", access_log=True)


@api.group("keys")
def keys() -> None:
    """Create, list and revoke API keys (each bound to one tenant; stored hashed)."""


def _store():  # noqa: ANN202
    from crawl_assets.api.access import KeyStore

    return KeyStore()


@keys.command("create")
@click.option("--tenant", required=True, help="The tenant whose records the key reads.")
@click.option("--name", required=True, help="What the key is for (shown in listings).")
@click.option("--rate", "rate_per_minute", type=click.IntRange(1, 100_000), default=None,
              help="This key's requests per minute (default: the server's --rate).")
def create(tenant: str, name: str, rate_per_minute: int | None) -> None:
    """Create a key and print it once: it cannot be shown again (only its hash is stored)."""
    try:
        row, secret = _store().create(tenant, name, rate_per_minute)
    except ValueError as exc:
        fail(str(exc))
    click.echo(f"key id   {row.key_id}\ntenant   {row.tenant}\nname     {row.name}", err=True)
    click.echo("The key (shown once; store it now):", err=True)
    click.echo(secret)


@keys.command("list")
@click.option("--tenant", default=None, help="Only this tenant's keys.")
def list_keys(tenant: str | None) -> None:
    """Key ids, tenants, names, rates and states (never a secret)."""
    rows = _store().list(tenant)
    if not rows:
        click.echo("no keys")
        return
    click.echo(f"{'key id':<14}{'tenant':<24}{'state':<10}{'rate/min':<10}{'created':<22}name")
    for row in rows:
        state = "active" if row.active else "revoked"
        click.echo(f"{row.key_id:<14}{row.tenant:<24}{state:<10}{str(row.rate_per_minute or '-'):<10}"
                   f"{row.created_at:%Y-%m-%d %H:%M:%S}  {row.name}")


@keys.command("revoke")
@click.argument("key_id")
def revoke(key_id: str) -> None:
    """Revoke a key by its id (takes effect within 5 seconds on running servers)."""
    try:
        done = _store().revoke(key_id)
    except ValueError as exc:
        fail(str(exc))
    if not done:
        fail(f"no active key {key_id}", code=1)
    click.echo(f"revoked {key_id}")
