"""Records without an author id cannot be reached by ``erase --author``: the erasure says so per source
and points to ``--source``; an X account archive with its ``account.js`` gives its tweets the owner's id."""

from __future__ import annotations

import json

from click.testing import CliRunner

from crawl_assets import settings
from crawl_assets.pipeline.normalize import TABLE, normalize_batch
from crawl_assets.cli.demo import sample_file
from crawl_assets.cli.main import cli
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets.registry import SourceEntry
from crawl_assets.registry.store import Registry
from crawl_assets.orchestration.raw_export import ingest_export_file
from crawl_assets.sources.exports import tenant_import_root

ACCOUNT = 'window.YTD.account.part0 = [ {"account": {"email": "owner@example.com", "createdVia": "web", ' \
          '"username": "sample_owner", "accountId": "7700112233", "createdAt": "2015-01-01T00:00:00.000Z", ' \
          '"accountDisplayName": "Sample Owner"}} ]'


def _archive(tmp_path, with_account: bool) -> tuple[Lake, str, list[dict]]:
    folder = tenant_import_root("acme") / "archive" / "data"
    folder.mkdir(parents=True)
    (folder / "tweets.js").write_bytes(sample_file("x_archive_tweets.js").read_bytes())
    if with_account:
        (folder / "account.js").write_text(ACCOUNT)
    lake = Lake(settings.lake_root())
    entry = SourceEntry(name="arch", tenant="acme", platform="x", kind="export_file",
                        identifier="archive/data/tweets.js", options={"format": "x-archive"})
    batch = ingest_export_file(entry, Registry(path=tmp_path / "sources.yaml"), lake, "run1").batch
    normalize_batch(lake, batch, lake.table_part(TABLE, "acme", "x", entry.key, batch.manifest.batch_id))
    rows = [r for _, t in lake.read_parts(TABLE, "acme", "x", entry.key) for r in arrow_to_records(t)]
    return lake, entry.key, rows


def test_erase_by_author_names_the_sources_it_cannot_see_into(tmp_path, dagster_home):
    _, key, rows = _archive(tmp_path, with_account=False)
    assert rows and not [r for r in rows if r["author_id"]]

    result = CliRunner().invoke(cli, ["erase", "--tenant", "acme", "--author", "x:43"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["records_without_author"] == {key: len(rows)}
    assert f"{key}: {len(rows)} records have no author_id" in result.stderr
    assert f"--source {key}" in result.stderr


def test_an_archive_with_account_js_gives_its_tweets_the_owner_id(tmp_path, dagster_home):
    lake, key, rows = _archive(tmp_path, with_account=True)
    assert rows and {r["author_id"] for r in rows} == {"7700112233"}

    result = CliRunner().invoke(cli, ["erase", "--tenant", "acme", "--author", "7700112233"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["records"] == len(rows) and "no author_id" not in result.stderr
    assert not [r for _, t in lake.read_parts(TABLE, "acme", "x", key) for r in arrow_to_records(t)]
