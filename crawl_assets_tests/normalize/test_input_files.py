"""Whole input files: one bad file or batch never costs the others (issue 14 items 1, 4, 5, 15).

Fixtures are the bundled sample exports (our own synthetic data) in the shapes the platforms write, damaged
the ways real files are: a gzip cut short, a BOM from an editor, a file given with the wrong format.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import zlib

import pytest
from click.testing import CliRunner

from crawl_assets.cli.normalize import MAX_SHOWN_ERRORS, normalize
from crawl_assets.normalize import FORMATS, NormalizeContext, normalize_stream
from crawl_assets.normalize.reading import PIECE_BYTES
from crawl_assets.schema import Record, Rejection
from crawl_assets_tests.fuzz.seeds import seeds
from crawl_assets_tests.normalize.helpers import SAMPLES
from crawl_assets_tests.pipeline.lake_normalize import RawInput, normalize_in_lake

X_PAGES = SAMPLES / "x_v2_recording.jsonl"
EXPORT = SAMPLES / "telegram_export" / "result.json"


def _cli(*args: str):
    return CliRunner().invoke(normalize, list(args), catch_exceptions=False)


def _keys(stdout: str) -> set[str]:
    return {json.loads(line)["key"] for line in stdout.splitlines()}


def _truncated_gzip(data: bytes, keep: float = 0.5) -> bytes:
    packed = gzip.compress(data)
    return packed[: int(len(packed) * keep)]


def test_cli_truncated_gzip_among_good_files_keeps_the_good_ones(tmp_path):
    lines = X_PAGES.read_bytes().splitlines(keepends=True)
    first, second = tmp_path / "a.jsonl", tmp_path / "c.jsonl.gz"
    first.write_bytes(b"".join(lines[:4]))
    second.write_bytes(gzip.compress(b"".join(lines[6:])))
    bad = tmp_path / "b.jsonl.gz"
    bad.write_bytes(_truncated_gzip(b"".join(lines[4:6])))
    alone = {path: _keys(_cli("--format", "x-v2", str(path)).stdout) for path in (first, second)}
    result = _cli("--format", "x-v2", str(first), str(bad), str(second))
    assert alone[first] and alone[second]
    assert alone[first] | alone[second] <= _keys(result.stdout), "the good files are written whole"
    assert f"{bad}:" in result.stderr and "truncated or corrupt gzip data" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_file_that_reads_to_nothing_exits_1_but_writes_the_others(tmp_path):
    junk = tmp_path / "broken.gz"
    junk.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 40)
    result = _cli("--format", "x-v2", str(X_PAGES), str(junk))
    assert result.exit_code == 1
    assert len(_keys(result.stdout)) == 150
    assert "nothing could be read from" in result.stderr and str(junk) in result.stderr


def _rows(outcome, batch_id):
    return outcome.parts.get(batch_id, [])


def test_pipeline_bad_batches_are_quarantined_and_the_others_written(tmp_path):
    source = "acme.x.pages"
    lines = X_PAGES.read_bytes().splitlines()
    good = [RawInput("20260101T000000000000Z-r1-0000", "x-v2", lines[:3], method="api"),
            RawInput("20260101T000000000000Z-r1-0002", "x-v2", lines[6:], method="api")]
    unknown = RawInput("20260101T000000000000Z-r1-0001", "x-v9", lines[3:6], method="api")
    outcome = normalize_in_lake(tmp_path / "lake", "x", source, [good[0], unknown, good[1]])
    assert _rows(outcome, good[0].batch_id) and _rows(outcome, good[1].batch_id)
    assert unknown.batch_id not in outcome.parts, "a batch that failed leaves no part (tried again next run)"
    (rejection,) = outcome.quarantine[unknown.batch_id]
    assert "batch could not be normalized" in rejection["reason"] and "x-v9" in rejection["reason"]
    assert outcome.metadata["batches_failed"] == 1 and outcome.metadata["batches_normalized"] == 2


def test_pipeline_truncated_raw_file_keeps_what_was_read(tmp_path):
    source = "acme.x.pages"
    lines = X_PAGES.read_bytes().splitlines()
    from crawl_assets_tests.pipeline.lake_normalize import write_batches

    lake = write_batches(tmp_path / "lake", "acme", "x", source,
                         [RawInput("20260101T000000000000Z-r1-0000", "x-v2", lines, method="api")])
    (batch,) = lake.raw_batches("acme", "x", source)
    path = batch.path
    with lake.fs.open(path, "rb") as fh:
        whole = fh.read()
    with lake.fs.open(path, "wb") as fh:
        fh.write(whole[: len(whole) * 2 // 3])
    from crawl_assets_tests.pipeline.lake_normalize import materialize_normalized

    # what a truncated gzip still holds: its complete lines; a failing read loses at most one piece of them
    recoverable = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(whole[: len(whole) * 2 // 3])
    ends = [i + 1 for i, byte in enumerate(recoverable) if byte == ord("\n")]

    def records_in(n_lines: int) -> int:
        return sum(len(json.loads(line)["data"]) for line in lines[:n_lines])

    at_most = records_in(len(ends))
    at_least = records_in(sum(1 for end in ends if end <= len(recoverable) - PIECE_BYTES))
    assert 0 < at_least < at_most < 150
    metadata = materialize_normalized(tmp_path / "lake", "x", source)
    assert metadata["batches_failed"] == 0 and at_least <= metadata["records_written"] <= at_most
    assert metadata["quarantine_files"], "the truncation is quarantined with its reason"


def test_pipeline_reads_a_gzip_export_like_the_plain_one(tmp_path):
    source = "acme.telegram.export"
    plain = EXPORT.read_bytes()
    outcome = normalize_in_lake(tmp_path / "lake", "telegram", source, [
        RawInput("20260101T000000000000Z-r1-0000", "telegram-export", plain),
        RawInput("20260102T000000000000Z-r1-0000", "telegram-export", gzip.compress(plain)),
    ])  # fmt: skip
    first, second = (outcome.parts[b] for b in sorted(outcome.parts))
    assert len(first) == len(second) == 195
    assert [r["text"] for r in first] == [r["text"] for r in second]
    assert {r["reason"] for rows in outcome.quarantine.values() for r in rows} == {"service message"}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_utf8_bom_is_accepted_by_every_format(fmt):
    spec = seeds()[fmt]
    original = payload = spec.encode(list(spec.items))
    if payload[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):  # Play Console CSV: UTF-16 with its own BOM;
        payload = payload.decode("utf-16").encode("utf-8")  # the same file re-saved as UTF-8 reads the same
    context = NormalizeContext(tenant="t", source="s")

    def items(data: bytes) -> list:
        return [i.model_dump(mode="json") for i in normalize_stream(fmt, io.BytesIO(data), name="f", context=context)]

    expected = items(original)
    assert expected, f"{fmt}: seeds that give nothing prove nothing"
    assert items(codecs.BOM_UTF8 + payload) == expected
    assert items(gzip.compress(codecs.BOM_UTF8 + payload)) == expected


def test_wrong_format_says_which_format_the_file_is(tmp_path):
    result = _cli("--format", "x-v2", str(EXPORT))
    assert result.exit_code == 1
    assert "looks like a Telegram Desktop export (result.json), not x-v2: use --format telegram-export" in result.stderr
    assert result.stderr.count(str(EXPORT)) <= 2, "one reason for the file, not one per line"
    archive = _cli("--format", "telegram-export", str(SAMPLES / "x_archive_tweets.js"))
    assert "use --format x-archive" in archive.stderr and archive.exit_code == 1
    pages = list(normalize_stream("telegram", X_PAGES.open("rb"), name="p", context=NormalizeContext()))
    assert len(pages) == 1 and isinstance(pages[0], Rejection) and "--format x-v2" in pages[0].reason


def test_errors_shown_are_bounded_and_all_are_written_on_request(tmp_path):
    bad = tmp_path / "bad.jsonl"
    good_line = X_PAGES.read_bytes().splitlines()[0]
    bad.write_bytes(good_line + b"\n" + b"{not json\n" * (MAX_SHOWN_ERRORS + 30))
    out = tmp_path / "rejections.jsonl"
    result = _cli("--format", "x-v2", "--rejections-out", str(out), str(bad))
    shown = [line for line in result.stderr.splitlines() if ": invalid JSON" in line]
    assert len(shown) == MAX_SHOWN_ERRORS
    assert "30 more errors not shown" in result.stderr
    assert f"{MAX_SHOWN_ERRORS + 30} malformed" in result.stderr
    written = [Rejection.model_validate_json(line) for line in out.read_text().splitlines()]
    assert len(written) == MAX_SHOWN_ERRORS + 30 and {r.line for r in written} == set(range(2, MAX_SHOWN_ERRORS + 32))
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 15


def test_validated_records_come_out_of_bom_and_gzip_input(tmp_path):
    packed = tmp_path / "export.json.gz"
    packed.write_bytes(gzip.compress(codecs.BOM_UTF8 + EXPORT.read_bytes()))
    result = _cli("--format", "telegram-export", str(packed))
    assert result.exit_code == 0
    assert len([Record.model_validate_json(line) for line in result.stdout.splitlines()]) == 195
