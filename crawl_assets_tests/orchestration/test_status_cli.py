"""``crawl-assets status`` and ``sources show`` read sync state from the instance in DAGSTER_HOME."""

from __future__ import annotations

import json
import time

import dagster as dg
from click.testing import CliRunner

from crawl_assets.cli.main import cli
from crawl_assets.monitoring.health import record_failure, record_success
from crawl_assets.sources.common import pause_source
from crawl_assets_tests.orchestration.conftest import x_registry


def test_status_table_and_json(tmp_path, dagster_home, monkeypatch):
    registry = x_registry(tmp_path / "sources.yaml", {"ok": "a", "bad": "b", "new": "c", "late": "d", "off": "e"})
    pause_source(registry, "acme.x.off", "X refused the request: 403 client-forbidden")
    with dg.DagsterInstance.get() as instance:
        record_success(instance, "acme.x.ok", run_id="r1", lag_seconds=30)
        record_failure(instance, "acme.x.bad", "users/tweets: HTTP 503 after 5 attempts", run_id="r2")
        record_success(instance, "acme.x.late", now=time.time() - 3 * 3600)  # interval 5 min: long overdue
    runner = CliRunner()
    out = runner.invoke(cli, ["status"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    lines = {line.split()[0]: line for line in out.output.splitlines()[1:-1]}
    assert lines["acme.x.ok"].split()[1] == "ok"
    assert lines["acme.x.bad"].split()[1] == "failing" and "HTTP 503" in lines["acme.x.bad"]
    assert lines["acme.x.new"].split()[1] == "never"
    assert lines["acme.x.late"].split()[1] == "late"
    assert lines["acme.x.off"].split()[1] == "paused" and "client-forbidden" in lines["acme.x.off"]
    assert out.output.splitlines()[-1].startswith("5 sources:")

    rows = [json.loads(x) for x in runner.invoke(cli, ["status", "--json", "--state", "failing"]).output.splitlines()]
    assert [(r["key"], r["failures"], r["last_run_id"]) for r in rows] == [("acme.x.bad", 1, "r2")]

    shown = runner.invoke(cli, ["sources", "show", "acme.x.off"]).output
    assert "paused: X refused the request: 403 client-forbidden" in shown
    shown = runner.invoke(cli, ["sources", "show", "acme.x.bad"]).output
    assert "failing: 1 in a row; last error: users/tweets: HTTP 503" in shown
    assert "last sync: never" in runner.invoke(cli, ["sources", "show", "acme.x.new"]).output
