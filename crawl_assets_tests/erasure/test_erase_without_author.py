"""Records without an author id cannot be reached by ``erase --author``: the erasure says so per source
and points to ``--source``; an X account archive with its ``account.js`` gives its tweets the owner's id."""

from __future__ import annotations

import json

from click.testing import CliRunner

from crawl_assets.pipeline.normalize.stage import TABLE
from crawl_assets.cli.main import cli
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import arrow_to_records
from crawl_assets_tests.pipeline.export_source import x_archive_source


def _archive(tmp_path, with_account: bool) -> tuple[Lake, str, list[dict]]:
    lake, key, rows, _ = x_archive_source(tmp_path, with_account)
    return lake, key, rows


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
