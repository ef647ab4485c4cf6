"""``crawl-assets erase``: remove one author's or one source's data from a tenant (lake, edges, index)."""

from __future__ import annotations

import json
import os

import click


@click.command("erase")
@click.option("--tenant", required=True, help="The tenant whose data is erased.")
@click.option("--author", default=None, help="Platform author id or handle whose records are erased.")
@click.option("--source", default=None, help="Source key ({tenant}.{platform}.{name}) whose data is erased.")
@click.option("--es-url", default=None, help="Elasticsearch URL (default: $CRAWL_ES_URL; unset: lake only, "
              "then run it again with a cluster before re-indexing).")
def erase(tenant: str, author: str | None, source: str | None, es_url: str | None) -> None:
    """Hard-delete data for a deletion request; records what was erased (without the data)."""
    from crawl_assets import settings
    from crawl_assets.erasure import Selector
    from crawl_assets.erasure import erase as run_erasure
    from crawl_assets.lake import Lake

    try:
        selector = Selector(tenant=tenant, author=author, source=source)
    except ValueError as exc:
        raise click.UsageError(f"{exc} (use --author ID or --source KEY)") from None
    url = es_url or os.environ.get("CRAWL_ES_URL")
    client = None
    if url:
        from crawl_assets.resources.elasticsearch import ElasticsearchResource

        client = ElasticsearchResource.from_env(url).get_client()
    from crawl_assets.scheduling.locks import SourceBusy

    try:
        report = run_erasure(Lake(settings.lake_root()), client, selector)
    except SourceBusy as exc:
        raise click.ClickException(f"{exc}: nothing was erased; run it again when the sync is done") from None
    finally:
        if client is not None:
            client.close()
    click.echo(json.dumps(report.as_dict(), indent=2))
    if client is None:
        click.echo("index not touched: no Elasticsearch configured (set CRAWL_ES_URL or --es-url)", err=True)
