"""``crawl-assets enrich``: one enricher over normalized records in files (JSON lines from ``crawl-assets
normalize``, gzip, or a lake Parquet part), rows stamped on stdout, bad lines named by file and line."""

from __future__ import annotations

import gzip
from datetime import timedelta

import orjson
from click.testing import CliRunner

from crawl_assets.cli.main import cli
from crawl_assets.enrich import build
from crawl_assets.lake import Lake
from crawl_assets_tests.enrich.records import T0, batch_id, record, write_part

PERSIAN = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
SLOGAN = "everyone must join the protest at the central square tomorrow at noon"


def _rows():
    rows = [record("x:1", "call 0912 345 6789", author="a"),
            record("x:2", "شماره " + "09123456789".translate(PERSIAN), author="b"),
            record("x:3", "رقم " + "0912 345 6789".translate(ARABIC), author="c"),
            record("x:4", "nothing personal here", author="d")]
    rows += [record(f"x:d{i}", SLOGAN + "!" * i, author=f"acct{i}", at=T0 + timedelta(hours=i)) for i in range(3)]
    return rows


def _write_lines(path, rows, extra: list[bytes] = ()):
    data = b"".join(orjson.dumps(r) + b"\n" for r in rows) + b"".join(extra)
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def _run(*args):
    return CliRunner().invoke(cli, ["enrich", *map(str, args)])


def _out(result) -> list[dict]:
    return [orjson.loads(line) for line in result.stdout.splitlines()]


def test_personal_data_in_three_digit_systems_from_gzip_lines(tmp_path):
    path = _write_lines(tmp_path / "records.jsonl.gz", _rows())
    before = path.read_bytes()
    result = _run("--enricher", "personal_data", "--param", "redacted_view=true", path)
    assert result.exit_code == 0, result.output
    rows = {r["key"]: r for r in _out(result)}
    assert set(rows) == {"x:1", "x:2", "x:3"}
    stamp = build("personal_data", {"redacted_view": True}).stamp
    assert {(r["enricher"], r["enricher_version"], r["inferred"]) for r in rows.values()} == {("personal_data", stamp, True)}
    assert rows["x:1"]["text_clean_redacted"] == "call [phone]" and rows["x:2"]["types"] == ["phone"]
    assert "0912" not in orjson.dumps(rows["x:1"]["spans"]).decode()
    assert f"{stamp}: 7 records read, 3 rows, 0 problems" in result.stderr
    assert path.read_bytes() == before


def test_tenant_wide_tables_and_bad_lines(tmp_path):
    other = record("x:o", "another tenant", tenant="other")
    path = _write_lines(tmp_path / "records.jsonl", _rows(), [b"{not json\n", b'{"text": "no key"}\n',
                                                                orjson.dumps(other) + b"\n"])
    result = _run("--enricher", "near_duplicates", path)
    assert result.exit_code == 0, result.output
    [cluster] = _out(result)
    assert cluster["member_count"] == 3 and cluster["accounts"] == ["acct0", "acct1", "acct2"]
    assert f"{path}:8: not JSON" in result.stderr and f"{path}:9: no 'key'" in result.stderr
    assert f"{path}:10: tenant 'other' differs" in result.stderr
    members = _out(_run("--enricher", "near_duplicates", "--table", "members", path))
    assert sorted(m["key"] for m in members) == ["x:d0", "x:d1", "x:d2"]
    assert _run("--enricher", "near_duplicates", "--strict", path).exit_code == 1


def test_a_lake_part_and_a_config_file(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    part = write_part(lake, _rows(), batch_id(1))
    config = tmp_path / "enrichment.yaml"
    config.write_text("enrichers:\n  personal_data: {types: [email]}\n")
    result = _run("--enricher", "personal_data", "--config", config, tmp_path / "lake" / part)
    assert result.exit_code == 0 and _out(result) == [], "phones are not among the configured types"
    accounts = _out(_run("--enricher", "account_activity", tmp_path / "lake" / part))
    assert {a["author_id"]: a["posts"] for a in accounts} == {"a": 1, "b": 1, "c": 1, "d": 1, "acct0": 1,
                                                                "acct1": 1, "acct2": 1}


def test_usage_errors_are_one_line(tmp_path):
    path = _write_lines(tmp_path / "r.jsonl", _rows())
    for args, message in ((["--enricher", "sentiment", path], "unknown enricher 'sentiment'"),
                          (["--enricher", "near_duplicates", "--param", "threshold=7", path], "threshold"),
                          (["--enricher", "near_duplicates", "--param", "nope", path], "expected NAME=VALUE"),
                          (["--enricher", "trends", "--table", "clusters", path], "not 'clusters'"),
                          (["--enricher", "trends", tmp_path / "missing.jsonl"], "no such file")):
        result = _run(*args)
        assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output, args
