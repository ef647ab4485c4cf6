"""A tenant named under the earlier rule (``acme-``) can still be erased: ``erase --tenant acme-
--legacy-tenant`` removes every lake folder and earlier-scheme index of it, and nothing of ``acme``."""

from __future__ import annotations

from click.testing import CliRunner

from crawl_assets import settings
from crawl_assets.cli.main import cli
from crawl_assets.lake import Lake
from crawl_assets_tests.es_node.fixtures import EsCluster


def _seed(lake: Lake, tenant: str) -> None:
    for rel in (f"raw/{tenant}/x/{tenant}.x.feed/b.jsonl.gz", f"quarantine/{tenant}/x/{tenant}.x.feed/b.jsonl",
                f"tables/normalized_records/{tenant}/x/{tenant}.x.feed/b.parquet", f"deadletter/records/r1/{tenant}/d.jsonl"):
        lake.write_bytes(rel, b"data of " + tenant.encode())


def test_a_legacy_named_tenant_is_erased_whole(dagster_home, es_cluster: EsCluster):
    lake = Lake(settings.lake_root())
    _seed(lake, "acme-")
    _seed(lake, "acme")
    client = es_cluster.client
    for index in ("crawl-records-acme--2026.01", "crawl-records-acme-2026.01"):  # earlier scheme: acme-, acme
        client.indices.create(index=index)
    try:
        refused = CliRunner().invoke(cli, ["erase", "--tenant", "acme-", "--author", "43"])
        assert refused.exit_code == 2 and "--legacy-tenant" in refused.output

        done = CliRunner().invoke(cli, ["erase", "--tenant", "acme-", "--legacy-tenant", "--es-url", es_cluster.url])
        assert done.exit_code == 0, done.output
        assert [p for p in lake.fs.glob(lake.path("**")) if "/acme-/" in p and "/erasure/" not in p] == []
        assert len(lake.fs.glob(lake.path("*/acme/**/*.*"))) + len(lake.fs.glob(lake.path("tables/*/acme/**/*.*"))) >= 3
        assert not client.indices.exists(index="crawl-records-acme--2026.01")
        assert client.indices.exists(index="crawl-records-acme-2026.01"), "the other tenant's index stays"
        assert [e["by"] for e in lake.read_erasure_log("acme-")] == ["legacy_tenant"]
        valid = CliRunner().invoke(cli, ["erase", "--tenant", "acme", "--legacy-tenant"])
        assert valid.exit_code == 2 and "is a valid tenant name" in valid.output
    finally:
        client.indices.delete(index="crawl-records-acme--2026.01,crawl-records-acme-2026.01", ignore_unavailable=True)
