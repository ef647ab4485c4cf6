"""``crawl-assets sync SOURCE``: one source synced now through the job the UI launches, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys

import dagster as dg

from crawl_assets import settings
from crawl_assets.cli.demo import register_samples
from crawl_assets.registry import SourceEntry, load_registry
from crawl_assets_tests.conftest import REPO


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRAWL_X_")}
    return subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=REPO)


def test_sync_one_source_now_then_read_it(dagster_home):
    register_samples(settings.registry_path())
    synced = cli("sync", "sample-archive")  # by name; its partition is added as the registry sensor would
    assert synced.returncode == 0, synced.stderr[-2000:]
    assert "demo.x.sample-archive\n" in synced.stdout and "records 5, rejected 0" in synced.stdout
    assert "index step skipped" in synced.stdout
    with dg.DagsterInstance.get() as instance:
        [run] = instance.get_runs()
        assert instance.get_dynamic_partitions("x_sources") == ["demo.x.sample-archive"]
    assert run.job_name == "x_sync_no_index" and run.tags["dagster/partition"] == "demo.x.sample-archive"
    assert run.status == dg.DagsterRunStatus.SUCCESS
    read = cli("records", "--source", "demo.x.sample-archive", "--field", "key")
    assert read.returncode == 0 and len(read.stdout.splitlines()) == 5, read.stderr


def test_a_failed_sync_exits_1_with_the_reason_and_no_traceback(dagster_home):
    reg = load_registry(settings.registry_path())
    reg.add(SourceEntry(name="news", tenant="acme", platform="x", kind="account_timeline", identifier="news"))
    reg.save()
    failed = cli("sync", "acme.x.news")  # no X token is set
    assert failed.returncode == 1
    assert "acme.x.news: run " in failed.stderr and "CRAWL_X_BEARER_TOKEN" in failed.stderr, failed.stderr[-2000:]
    assert "paused: " in failed.stderr and "Traceback" not in failed.stderr and "Stack Trace" not in failed.stderr
    assert cli("sync", "acme.x.none").returncode == 2
