"""`crawl-assets demo` end to end, as a user runs it: a subprocess in an empty DAGSTER_HOME."""

import os
import re
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from crawl_assets_tests.conftest import REPO
from crawl_assets_tests.worlds import DemoHome


def run_demo(home: Path, *args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """As a user runs it: lake, registry and import root in the home."""
    env = {k: v for k, v in os.environ.items() if k not in ("CRAWL_LAKE", "CRAWL_REGISTRY", "CRAWL_IMPORT_ROOT")}
    env.update({"DAGSTER_HOME": str(home), **(env_extra or {})})
    return subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", "demo", *args],
                          capture_output=True, text=True, timeout=600, env=env, cwd=REPO)


def counts(stdout: str) -> dict[str, tuple[int, int]]:
    """source key -> (records, edges) from the summary."""
    out, current = {}, None
    for line in stdout.splitlines():
        if re.match(r"^demo\.\w+\.[\w-]+$", line.strip()):
            current = line.strip()
        m = re.match(r"\s+records (\d+), rejected \d+, edges (\d+)", line)
        if m and current:
            out[current] = (int(m.group(1)), int(m.group(2)))
    return out


def test_demo_in_empty_home_on_sqlite(demo_home: DemoHome):
    home, first = demo_home.home, demo_home  # run once per session in an empty home; its copies serve the UI tests
    assert first.returncode == 0, first.stderr[-3000:]
    got = counts(first.stdout)
    assert set(got) == {"demo.telegram.sample-channel", "demo.x.sample-search", "demo.x.sample-archive"}
    assert all(records > 0 and edges > 0 for records, edges in got.values())
    assert "index step skipped" in first.stdout and "Open the UI: crawl-assets ui " in first.stdout
    assert (home / "dagster.yaml").exists() and (home / "storage").is_dir()
    assert list((home / "lake" / "tables" / "normalized_records" / "demo").rglob("*.parquet"))

    # The runs are in the instance the UI reads.
    os.environ["DAGSTER_HOME"] = str(home)
    with dg.DagsterInstance.get() as instance:
        runs = instance.get_runs()
    assert sorted(r.job_name for r in runs) == ["source_health_checks", "telegram_enrich", "telegram_sync_no_index",
                                                "x_enrich", "x_enrich", "x_sync_no_index", "x_sync_no_index"]
    assert "demo.x.sample-search enriched: account_activity (" in first.stdout
    # a source's line has its own figures; the tenant-wide tables are said once, as the tenant's
    assert not [line for line in first.stdout.splitlines() if " enriched: " in line and "tables" in line], first.stdout
    assert sum(line.startswith("tenant demo (all its sources): ") for line in first.stdout.splitlines()) == 1
    assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)

    # Running it again fetches nothing twice: no new raw batch, same counts.
    raw_before = sorted(p.name for p in (home / "lake" / "raw").rglob("*.jsonl.gz"))
    second = run_demo(home)
    assert second.returncode == 0, second.stderr[-3000:]
    assert counts(second.stdout) == got
    assert "demo.x.sample-search enriched: account_activity unchanged" in second.stdout, second.stdout
    assert "(0 rows" not in second.stdout
    assert sorted(p.name for p in (home / "lake" / "raw").rglob("*.jsonl.gz")) == raw_before


def test_demo_on_postgres_instance(tmp_path, pg_url):
    home = tmp_path / "pg_home"
    result = run_demo(home, env_extra={"DAGSTER_PG_URL": pg_url})
    assert result.returncode == 0, result.stderr[-3000:]
    assert all(r > 0 and e > 0 for r, e in counts(result.stdout).values())
    assert not (home / "storage" / "runs.db").exists(), "nothing went to SQLite"
    import sqlalchemy as sa

    engine = sa.create_engine(pg_url)
    with engine.connect() as conn:
        statuses = [row[0] for row in conn.execute(sa.text("SELECT status FROM runs"))]
    engine.dispose()
    assert statuses.count("SUCCESS") == 7 and len(statuses) == 7  # three syncs, their enrichment, the health checks


def test_demo_indexes_into_elasticsearch_when_configured(tmp_path, es_cluster):
    client = es_cluster.client
    env = {k: v for k, v in es_cluster.env().items() if k != "CRAWL_ES_URL"}
    result = run_demo(tmp_path / "es_home", "--es-url", es_cluster.url, env_extra=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "index step skipped" not in result.stdout
    got = counts(result.stdout)
    client.indices.refresh(index="crawl-records-demo")
    indexed = client.count(index="crawl-records-demo")["count"]  # the tenant's read alias
    assert indexed == sum(records for records, _ in got.values())
    assert client.count(index="crawl-edges-demo")["count"] > 0
    # Re-running (configured by CRAWL_ES_URL this time) converges: no new documents, nothing failed.
    again = run_demo(tmp_path / "es_home", env_extra=es_cluster.env())
    assert again.returncode == 0, again.stderr[-3000:]
    client.indices.refresh(index="crawl-records-demo")
    assert client.count(index="crawl-records-demo")["count"] == indexed


def test_search_index_without_cluster_is_skipped_not_failed(tmp_path, dagster_home, monkeypatch):
    """The README's backfill ("and downstream") without Elasticsearch: the run succeeds, the index asset
    stays unmaterialized, and both the run log and the asset's description say why and what to set."""
    from crawl_assets.cli.demo import register_samples
    from crawl_assets.definitions import build_definitions
    from crawl_assets import settings

    monkeypatch.delenv("CRAWL_ES_URL", raising=False)
    keys = register_samples(settings.registry_path())
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("x_sources", [k for k in keys if ".x." in k])
        defs = build_definitions()
        # an asset backfill of the whole chain (the job with the index step is defined only with a cluster)
        job = dg.define_asset_job("whole_chain", selection=dg.AssetSelection.assets(dg.AssetKey(["x", "x_posts_raw"]))
                                  .downstream() - dg.AssetSelection.key_prefixes(["x", "enrichment"], ["enrichment"]))
        job = dg.Definitions.merge(defs, dg.Definitions(jobs=[job])).resolve_job_def("whole_chain")
        result = job.execute_in_process(partition_key="demo.x.sample-search", instance=instance, raise_on_error=False)
        assert result.success, [str(e.event_specific_data) for e in result.all_events if e.is_failure]
        materialized = {e.event_specific_data.materialization.asset_key.path[-1]
                        for e in result.all_events if e.event_type_value == "ASSET_MATERIALIZATION"}
        assert materialized == {"x_posts_raw", "normalized_records", "relation_edges"}
        index_key = dg.AssetKey(["x", "search_index"])
        assert instance.get_materialized_partitions(index_key) == set()
        logs = [r.user_message for r in instance.all_logs(result.run_id) if r.step_key == "x__search_index"]
        assert any("not materialized" in m and "CRAWL_ES_URL" in m for m in logs), logs
        spec = defs.resolve_assets_def(index_key).specs_by_key[index_key]
        assert "Not materialized" in (spec.description or "") and "CRAWL_ES_URL" in (spec.description or "")
        # No checks that could read as passed (or failed) on an index that cannot run.
        assert not list(defs.resolve_assets_def(index_key).check_specs)
