"""``crawl-assets normalize`` and the ``normalized_records`` step agree on every real-world fixture: the same
records and the same rejections (issue 14 acceptance).

Each fixture is one file: the CLI reads it (with the source options as flags and the same collection time),
the pipeline reads it as an ingested export batch (options in the manifest, as ``ingest_export_file`` stores
them). What names the run or the file (``run_id``, ``raw_pointer``, a rejection's ``name``) differs by design.
"""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from typing import Any

import pytest
from click.testing import CliRunner

from crawl_assets.cli.normalize import normalize
from crawl_assets.lake import Lake
from crawl_assets.lake.tables import TIME_COLUMNS, arrow_to_records
from crawl_assets.normalize.context import normalize_options
from crawl_assets.core import catalog
from crawl_assets_tests.normalize.fixtures import Fixture, fixtures
from crawl_assets_tests.pipeline.export_source import x_archive_source
from crawl_assets_tests.pipeline.lake_normalize import materialize_normalized

COLLECTED = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc)
PLATFORM = {fmt: catalog.catalog().platform_of_format(fmt) for fmt in catalog.catalog().formats()}


def _instant(value: Any) -> Any:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else value


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    record = dict(record)
    for column in TIME_COLUMNS:
        record[column] = _instant(record.get(column))
    provenance = dict(record["provenance"], run_id=None, raw_pointer=None)
    provenance["collected_at"] = _instant(provenance.get("collected_at"))
    record["provenance"] = provenance
    return record


def _rejection(row: dict[str, Any]) -> tuple[Any, ...]:
    return row["line"], row["reason"], row["snippet"], row["error"]


def _cli(tmp_path, name: str, fixture: Fixture) -> tuple[dict[str, dict], list[tuple[Any, ...]]]:
    path, rejected = tmp_path / "input.bin", tmp_path / "rejections.jsonl"
    path.write_bytes(fixture.data)
    source = f"acme.{PLATFORM[fixture.fmt]}.src"
    args = ["--format", fixture.fmt, "--tenant", "acme", "--source", source, "--collected-at", COLLECTED.isoformat(),
            "--rejections-out", str(rejected), "--quiet", str(path)]  # fmt: skip
    if "timezone" in fixture.options:
        args[:0] = ["--timezone", fixture.options["timezone"]]
    if "languages" in fixture.options:
        args[:0] = ["--languages", fixture.options["languages"]]
    if "account_id" in fixture.options:
        args[:0] = ["--account-id", fixture.options["account_id"]]
    result = CliRunner().invoke(normalize, args, catch_exceptions=False)
    assert "Traceback" not in result.stderr, name
    records = {r["key"]: _comparable(r) for r in map(json.loads, result.stdout.splitlines())}
    return records, [_rejection(json.loads(line)) for line in rejected.read_text().splitlines()]


def _pipeline(tmp_path, fixture: Fixture) -> tuple[dict[str, dict], list[tuple[Any, ...]]]:
    platform = PLATFORM[fixture.fmt]
    source = f"acme.{platform}.src"
    options = json.loads(json.dumps(normalize_options(fixture.options)))
    lake = Lake(str(tmp_path / "lake"))
    lake.write_raw_batch(tenant="acme", platform=platform, source=source, batch_id="20261130T040000000000Z-r1-0000",
                         fmt=fixture.fmt, method="export", run_id="r1", stream=io.BytesIO(fixture.data),
                         collected_at=COLLECTED, extra={"normalize": options} if options else {})  # fmt: skip
    materialize_normalized(tmp_path / "lake", platform, source)
    rows = [row for _, table in lake.read_parts("normalized_records", "acme", platform, source)
            for row in arrow_to_records(table)]
    quarantine = lake.path(f"quarantine/acme/{platform}/{source}")
    rejections = []
    if lake.fs.exists(quarantine):
        for path in sorted(lake.fs.glob(f"{quarantine}/*.jsonl")):
            with lake.fs.open(path, "rb") as fh:
                rejections += [_rejection(json.loads(line)) for line in fh.read().splitlines() if line.strip()]
    return {r["key"]: _comparable(r) for r in rows}, rejections


@pytest.mark.parametrize("name", sorted(fixtures()))
def test_cli_and_pipeline_agree(tmp_path, name):
    fixture = fixtures()[name]
    (tmp_path / "cli").mkdir()
    cli_records, cli_rejections = _cli(tmp_path / "cli", name, fixture)
    pipe_records, pipe_rejections = _pipeline(tmp_path / "pipe", fixture)
    assert cli_records or cli_rejections, f"{name}: the fixture gives something to compare"
    assert cli_records == pipe_records, name
    assert cli_rejections == pipe_rejections, name


def test_x_archive_owner_from_account_js_beside_the_file(tmp_path, dagster_home):
    """Issue 29 item 3: the CLI reads the account.js beside tweets.js, as the pipeline does for an export source."""
    _, _, rows, tweets = x_archive_source(tmp_path, with_account=True)
    pipeline = {r["key"]: r["author_id"] for r in rows}
    result = CliRunner().invoke(normalize, ["--format", "x-archive", "--quiet", str(tweets)])
    cli = {r["key"]: r["author_id"] for r in map(json.loads, result.stdout.splitlines())}
    assert cli == pipeline and set(cli.values()) == {"7700112233"}
    explicit = CliRunner().invoke(normalize, ["--format", "x-archive", "--account-id", "42", str(tweets)])
    assert {json.loads(line)["author_id"] for line in explicit.stdout.splitlines()} == {"42"}
    bad = CliRunner().invoke(normalize, ["--format", "x-archive", "--account-id", "@owner", str(tweets)])
    assert bad.exit_code == 2 and "--account-id" in bad.stderr and "Traceback" not in bad.stderr
