"""``crawl-assets normalize``: stdout records, edges file, stderr reports, exit codes, never a traceback."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from crawl_assets.cli.normalize import normalize
from crawl_assets.schema import Edge, Record
from crawl_assets_tests.normalize.helpers import SAMPLES

SAMPLE_FILES = {
    "telegram-export": SAMPLES / "telegram_export" / "result.json",
    "x-v2": SAMPLES / "x_v2_recording.jsonl",
    "x-archive": SAMPLES / "x_archive_tweets.js",
}


def _invoke(*args: str, input: bytes | None = None):
    return CliRunner().invoke(normalize, list(args), input=input, catch_exceptions=False)


@pytest.mark.parametrize(("fmt", "count"), [("telegram-export", 195), ("x-v2", 150), ("x-archive", 5)])
def test_samples_normalize_to_valid_unique_records_and_edges(tmp_path, fmt, count):
    edges_path = tmp_path / "edges.jsonl"
    result = _invoke("--format", fmt, "--tenant", "acme", "--source", "demo", "--relations-out", str(edges_path),
                     str(SAMPLE_FILES[fmt]))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    records = [Record.model_validate_json(line) for line in result.stdout.splitlines()]
    assert len(records) == count
    assert len({r.key for r in records}) == count
    assert {(r.tenant, r.source) for r in records} == {("acme", "demo")}
    assert all(r.provenance.raw_pointer == str(SAMPLE_FILES[fmt].resolve()) for r in records)
    assert len({r.provenance.run_id for r in records}) == 1
    edges = [Edge.model_validate_json(line) for line in edges_path.read_text().splitlines()]
    keys = {r.key for r in records}
    assert edges and all(e.src in keys for e in edges)
    assert f"{count} records" in result.stderr


def test_retried_page_keeps_the_latest_observation():
    result = _invoke("--format", "x-v2", str(SAMPLE_FILES["x-v2"]))
    assert "15 duplicates dropped" in result.stderr
    pages = [json.loads(line) for line in SAMPLE_FILES["x-v2"].read_text().splitlines()]
    retried = {t["id"]: t["public_metrics"]["like_count"] for t in pages[5]["data"]}
    records = {r.native_id: r for r in map(Record.model_validate_json, result.stdout.splitlines())}
    assert all(records[i].metrics.likes == likes for i, likes in retried.items())  # the later, retried counts


def test_same_input_twice_is_one_record_each(tmp_path):
    once = _invoke("--format", "telegram-export", str(SAMPLE_FILES["telegram-export"]))
    twice = _invoke("--format", "telegram-export", str(SAMPLE_FILES["telegram-export"]),
                    str(SAMPLE_FILES["telegram-export"]))  # fmt: skip
    assert len(twice.stdout.splitlines()) == len(once.stdout.splitlines()) == 195


def test_malformed_lines_reported_and_skipped(tmp_path):
    good = SAMPLE_FILES["x-v2"].read_text().splitlines()[0]
    path = tmp_path / "pages.jsonl"
    path.write_text(good + "\n{oops\n\n[]\n")
    result = _invoke("--format", "x-v2", str(path))
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 15
    assert f"{path}:2: invalid JSON" in result.stderr
    assert f"{path}:4: expected a JSON object" in result.stderr
    assert "2 malformed" in result.stderr
    strict = _invoke("--strict", "--format", "x-v2", str(path))
    assert strict.exit_code == 1 and len(strict.stdout.splitlines()) == 15


def test_service_messages_are_counted_not_errors():
    result = _invoke("--strict", "--format", "telegram-export", str(SAMPLE_FILES["telegram-export"]))
    assert result.exit_code == 0
    assert "5 skipped (service message)" in result.stderr


def test_gzip_and_stdin(tmp_path):
    raw = SAMPLE_FILES["x-v2"].read_bytes()
    packed = tmp_path / "batch.jsonl.gz"
    packed.write_bytes(gzip.compress(raw))
    from_gzip = _invoke("--format", "x-v2", str(packed))
    from_stdin = _invoke("--format", "x-v2", "-", input=raw)
    assert from_gzip.exit_code == from_stdin.exit_code == 0
    assert len(from_gzip.stdout.splitlines()) == len(from_stdin.stdout.splitlines()) == 150


def _real_cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "crawl_assets.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)  # fmt: skip


def test_usage_errors_are_one_line_exit_2(tmp_path):
    unknown = _real_cli("normalize", "--format", "myspace", str(SAMPLE_FILES["x-v2"]))
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr.strip().count("\n") == 0 and "unknown format 'myspace'" in unknown.stderr
    missing = _real_cli("normalize", "--format", "x-v2", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr and "Traceback" not in missing.stderr
    assert missing.stderr.strip().count("\n") == 0
    folder = _invoke("--format", "x-v2", str(tmp_path))
    assert folder.exit_code == 2 and "cannot read" in folder.stderr
    corrupt = tmp_path / "bad.gz"
    corrupt.write_bytes(b"\x1f\x8b" + b"not gzip at all")
    broken = _invoke("--format", "x-v2", str(corrupt))  # read, and found unreadable: exit 1, not a usage error
    assert broken.exit_code == 1 and "corrupt gzip data" in broken.stderr and "nothing could be read" in broken.stderr


def test_garbage_input_never_tracebacks(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 20 + b"\n\xff\xfe{]}\n")
    result = _real_cli("normalize", "--format", "x-v2", str(junk))
    assert result.returncode == 1, result.stderr  # nothing could be read from the only file
    assert "Traceback" not in result.stderr and "junk.bin:1:" in result.stderr
    for fmt in SAMPLE_FILES:  # in process: an exception would propagate and fail the test
        result = _invoke("--format", fmt, str(junk))
        assert result.exit_code == 1 and "junk.bin" in result.stderr


def test_schema_command_on_the_real_cli():
    result = _real_cli("schema")
    assert result.returncode == 0
    assert set(json.loads(result.stdout)["properties"]) >= {"key", "text_clean", "provenance", "enrichment"}
