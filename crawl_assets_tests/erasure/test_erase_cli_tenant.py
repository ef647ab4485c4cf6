"""``crawl-assets erase`` for a tenant with no data (a typo, most likely) says so and logs nothing; an
invalid tenant name is reported against --tenant, without the selector hint."""

from __future__ import annotations

from click.testing import CliRunner

from crawl_assets import settings
from crawl_assets.cli.main import cli
from crawl_assets.lake import Lake


def test_erase_for_a_tenant_without_data_warns_and_logs_nothing(dagster_home, monkeypatch):
    monkeypatch.delenv("CRAWL_ES_URL", raising=False)
    result = CliRunner().invoke(cli, ["erase", "--tenant", "nonexistent", "--author", "43"])
    assert result.exit_code == 1 and "tenant 'nonexistent' has no data in the lake" in result.output
    lake = Lake(settings.lake_root())
    assert not lake.exists("erasure/nonexistent/log.jsonl")


def test_an_invalid_tenant_is_reported_against_the_tenant_option(dagster_home):
    result = CliRunner().invoke(cli, ["erase", "--tenant", "../etc", "--author", "43"])
    assert result.exit_code == 2 and "--tenant:" in result.output
    assert "--author-name NAME" not in result.output
