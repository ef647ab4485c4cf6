"""``crawl-assets records``: the normalized records of a tenant (or one source) from the lake, without
Elasticsearch: one per key, its latest observation (``crawl_assets.pipeline.reader``), as JSON lines or Parquet."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import orjson

from crawl_assets.cli.common import fail, skip_teardown_at_exit
from crawl_assets.registry.models import PLATFORMS


@click.command("records")
@click.option("--tenant", default=None, help="Whose records (required unless --source names them).")
@click.option("--platform", type=click.Choice(PLATFORMS, case_sensitive=False), default=None,
              help="Only this platform's sources.")
@click.option("--source", "source_key", default=None, metavar="KEY", help="Only this source: TENANT.PLATFORM.NAME.")
@click.option("--field", "fields", multiple=True, metavar="FIELD",
              help="A top-level field of the record (repeatable; default: all of them).")
@click.option("--live", is_flag=True, help="Leave out deleted records (their tombstones).")
@click.option("--parquet", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write one Parquet file here instead of JSON lines on stdout.")
def records(tenant: str | None, platform: str | None, source_key: str | None, fields: tuple[str, ...], live: bool,
            parquet: Path | None) -> None:
    """Print the normalized records from the lake: one line per record (its latest observation)."""
    from crawl_assets import settings
    from crawl_assets.lake import Lake
    from crawl_assets.core.names import check_source_key, check_tenant
    from crawl_assets.pipeline.reader import latest_batches, stored_rows
    from crawl_assets.lake.tables import RECORDS_SCHEMA, arrow_to_records

    try:
        if source_key is not None:
            key_tenant, key_platform, _ = check_source_key(source_key, tenant).split(".")
            if platform is not None and platform != key_platform:
                fail(f"--source {source_key} is not a {platform} source")
            tenant, platform = key_tenant, key_platform
        if tenant is None:
            fail("give --tenant (or --source)")
        check_tenant(tenant)
    except ValueError as exc:
        fail(str(exc))
    unknown = sorted(set(fields) - set(RECORDS_SCHEMA.names))
    if unknown:
        fail(f"--field {unknown[0]!r} is not a field of the record (crawl-assets schema lists them)")
    skip_teardown_at_exit()  # Arrow's readers run from here on
    lake = Lake(settings.lake_root())
    columns = list(fields) or None
    written = 0
    if parquet is not None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        batches = list(latest_batches(lake, tenant, platform, source_key, columns, deleted=not live))
        table = pa.concat_tables([pa.Table.from_batches([b]) for b in batches], promote_options="default") if batches \
            else pa.table({c: pa.array([], pa.string()) for c in columns or ["key"]})
        pq.write_table(table, parquet)
        written = table.num_rows
    else:
        out = sys.stdout.buffer
        try:
            for batch in latest_batches(lake, tenant, platform, source_key, columns, deleted=not live):
                for record in arrow_to_records(batch):
                    out.write(orjson.dumps(record) + b"\n")
                    written += 1
            out.flush()
        except BrokenPipeError:
            sys.stderr.close()  # downstream closed (e.g. `| head`): not an error of ours
            sys.exit(0)
    rows, parts = stored_rows(lake, tenant, platform, source_key)
    click.echo(f"crawl-assets records: {written} records (the latest observation of each key"
               + (", deleted ones left out" if live else "") + f") from {rows} rows in {parts} normalized parts "
               "(a record observed by several syncs has a row in each)", err=True)
