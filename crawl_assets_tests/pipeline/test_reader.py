"""Reading the records without Elasticsearch (``crawl_assets.pipeline.reader``, ``crawl-assets records``): one
row per key, its latest observation, although the parts hold a row per observation."""

from __future__ import annotations

import json

import pandas as pd
from click.testing import CliRunner

from crawl_assets import settings
from crawl_assets.cli.main import cli
from crawl_assets.lake import Lake
from crawl_assets.pipeline.reader import latest_records, read_records
from crawl_assets_tests.enrich.records import batch_id, record, write_part

SEARCH, TIMELINE = "acme.x.search", "acme.x.timeline"


def _lake() -> Lake:
    lake = Lake(settings.lake_root())
    write_part(lake, [record("x:1", "first text"), record("x:2", "kept"), record("x:3", "gone soon")], batch_id(1),
               source=SEARCH)
    # the next sync saw x:1 edited and x:3 deleted (its refresh window re-read them)
    write_part(lake, [record("x:1", "edited text"), record("x:3", "", deleted=True)], batch_id(2), source=SEARCH)
    write_part(lake, [record("x:9", "other source")], batch_id(1), source=TIMELINE)
    write_part(lake, [record("x:5", "another tenant", tenant="rival")], batch_id(1), tenant="rival")
    return lake


def test_one_row_per_key_its_latest_observation():
    lake = _lake()
    folder = pd.read_parquet(lake.path("tables/normalized_records/acme"))
    assert len(folder) == 6 and folder["key"].nunique() == 4  # what reading the folder gives

    table = read_records("acme")
    assert sorted(table.column("key").to_pylist()) == ["x:1", "x:2", "x:3", "x:9"]
    latest = {r["key"]: r for r in latest_records("acme")}
    assert latest["x:1"]["text"] == "edited text" and latest["x:3"]["deleted"] is True
    assert sorted(r["key"] for r in latest_records("acme", deleted=False, source=SEARCH)) == ["x:1", "x:2"]
    assert read_records("acme", columns=["key", "text"], deleted=False).column_names == ["key", "text"]
    assert read_records("nobody").num_rows == 0


def test_cli_prints_the_records_and_says_why_there_are_fewer_than_rows(tmp_path):
    _lake()
    result = CliRunner().invoke(cli, ["records", "--tenant", "acme", "--platform", "X"])
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(r["key"] for r in lines) == ["x:1", "x:2", "x:3", "x:9"]
    assert "4 records (the latest observation of each key) from 6 rows in 3 normalized parts" in result.stderr

    out = tmp_path / "search.parquet"
    result = CliRunner().invoke(cli, ["records", "--source", SEARCH, "--live", "--field", "key",
                                                      "--field", "text", "--parquet", str(out)])
    assert result.exit_code == 0, result.stderr
    assert sorted(pd.read_parquet(out).itertuples(index=False)) == [("x:1", "edited text"), ("x:2", "kept")]

    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    enriched = CliRunner().invoke(cli, ["enrich", "--enricher", "personal_data", "--strict",
                                                        str(tmp_path / "records.jsonl")])
    assert enriched.exit_code == 0, enriched.stderr  # what it prints is what `crawl-assets enrich` reads


def test_cli_refuses_bad_names_and_fields():
    runner = CliRunner()
    assert "invalid tenant" in runner.invoke(cli, ["records", "--tenant", "../acme"]).stderr
    assert "TENANT.PLATFORM.NAME" in runner.invoke(cli, ["records", "--source", "acme/x"]).stderr
    assert "not a field of the record" in runner.invoke(cli, ["records", "--tenant", "acme", "--field", "secret"]).stderr


def test_the_installed_command_exits_with_its_code_and_all_its_output(tmp_path):
    """The entry point ends `records` without the interpreter's teardown (Arrow's pools can abort it there):
    its exit code and every line it wrote must still arrive."""
    import os
    import subprocess
    import sys

    _lake()
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    run = [sys.executable, "-m", "crawl_assets.cli.main", "records"]
    out = tmp_path / "x.jsonl"
    with out.open("wb") as sink:
        done = subprocess.run([*run, "--tenant", "acme", "--live"], stdout=sink, stderr=subprocess.PIPE, env=env,
                              timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(line)["key"] for line in out.read_text().splitlines()) == ["x:1", "x:2", "x:9"]
    assert b"3 records" in done.stderr
    refused = subprocess.run([*run, "--tenant", "../acme"], capture_output=True, env=env, timeout=120)
    assert refused.returncode == 2 and b"invalid tenant" in refused.stderr
