"""``crawl-assets status`` and ``sources show`` read sync state from the instance in DAGSTER_HOME."""

from __future__ import annotations

import json
import time

import dagster as dg
from click.testing import CliRunner

from crawl_assets.cli.main import cli
from crawl_assets.orchestration.monitoring.health import record_failure, record_success
from crawl_assets.orchestration.raw_step import pause_source
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


def test_status_reports_invalid_entries_rejects_unknown_filters_and_cuts_at_words(tmp_path, dagster_home):
    registry = x_registry(tmp_path / "sources.yaml", {"ok": "a", "bad": "b"}, extra=(
        "  - name: nope\n    tenant: acme\n    platform: x\n    kind: channel\n    identifier: z\n"))
    long_error = "users/tweets: " + " ".join(["connection reset by the upstream proxy"] * 6)
    with dg.DagsterInstance.get() as instance:
        record_failure(instance, "acme.x.bad", long_error, run_id="r2")
    runner = CliRunner()  # click 8.2+: stdout and stderr apart
    out = runner.invoke(cli, ["status", "--registry", str(registry)])
    assert out.exit_code == 2  # like `sources list`: an invalid entry needs a person
    assert f"{registry}:" in out.stderr and "entry 3 ('nope'): field 'kind'" in out.stderr
    assert "1 invalid registry entries" in out.stdout
    assert out.stdout.splitlines()[0].split()[:3] == ["source", "state", "last"]
    [bad] = [line for line in out.stdout.splitlines() if line.startswith("acme.x.bad")]
    shown = bad.split("  ")[-1].strip()
    assert shown.endswith("proxy…") and len(shown) <= 100 and long_error.startswith(shown[:-1])

    for args in (["--platform", "bogus"], ["--state", "bogus"]):
        refused = runner.invoke(cli, ["status", "--registry", str(registry), *args])
        assert refused.exit_code == 2 and "Invalid value" in refused.stderr
