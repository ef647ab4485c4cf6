"""``crawl-assets webhooks serve``: run the webhook receiver (docs/sources/webhooks.md)."""

from __future__ import annotations

from pathlib import Path

import click

from crawl_assets import settings
from crawl_assets.cli.common import registry_option


@click.group()
def webhooks() -> None:
    """Receive Intercom and Discourse webhooks into the lake's landing area."""


@webhooks.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on (put TLS in front).")
@click.option("--port", default=8088, show_default=True, type=int)
@click.option("--lake", "lake_root", default=None, help="Lake root (default: $CRAWL_LAKE or $DAGSTER_HOME/lake).")
@registry_option
def serve(host: str, port: int, lake_root: str | None, registry_path: Path | str | None) -> None:
    """Verify each POST /hooks/{intercom|discourse}/{source_key} and land it; refuse and count the rest.

    Secrets come from CRAWL_INTERCOM_WEBHOOK_SECRET[__TENANT[__NAME]] and
    CRAWL_DISCOURSE_WEBHOOK_SECRET[__TENANT[__NAME]] (NAME: the source's credential). Counters: GET /metrics.
    """
    import uvicorn

    from crawl_assets.webhooks.app import create_app

    app = create_app(registry_path=registry_path or settings.registry_path(), lake_root=lake_root or settings.lake_root(),
                     environ=settings.environment())
    uvicorn.run(app, host=host, port=port, log_level="info", access_log=False)
