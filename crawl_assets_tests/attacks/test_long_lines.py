"""No line of an export makes a reader hold it whole (issue 30, item 5: a 1 MB ``.jsonl.gz`` holding one 1 GiB
line took a sync to 2.9 GB): a line longer than the cap (``CRAWL_MAX_LINE_BYTES``) is read through in bounded
pieces, quarantined with its reason, and the lines after it are normalized with their own numbers, on every
line-based path (one process, several processes, the sync's count and normalization, Play Console CSV, the
enrich command's input). The caps here are small; the long lines are made lazily, never allocated."""

from __future__ import annotations

import gzip
import io
import tracemalloc
import zlib
from datetime import datetime, timezone

import orjson
import pytest

from crawl_assets.enrich.files import FileRun, json_line_tables
from crawl_assets.lake import Lake
from crawl_assets.normalize import NormalizeContext, normalize_stream
from crawl_assets.normalize.parallel import normalize_encoded
from crawl_assets.pipeline.normalize.stage import TABLE, normalize_batch
from crawl_assets.schema import Rejection
from crawl_assets.sources.export_file.stats import export_record_stats

CAP = 64 << 10
SOURCE = "acme.telegram.group"


def _message(mid: int, text: str) -> bytes:
    return orjson.dumps({"_": "Message", "id": mid, "peer_id": {"_": "PeerChannel", "channel_id": 777},
                         "from_id": {"_": "PeerUser", "user_id": 501}, "date": "2026-01-05T10:00:00+00:00",
                         "message": text, "entities": []})


def _export(long_bytes: int) -> bytes:
    """Telethon messages, one a line; line 2 is a valid message whose text makes it ``long_bytes`` long."""
    long = _message(2, "x" * long_bytes)
    return b"\n".join([_message(1, "first"), long, _message(3, "third"), b"", _message(5, "fifth")]) + b"\n"


@pytest.fixture(autouse=True)
def small_cap(monkeypatch):
    monkeypatch.setenv("CRAWL_MAX_LINE_BYTES", str(CAP))


def _check(items: list) -> None:
    records = [i for i in items if not isinstance(i, Rejection)]
    rejections = [i for i in items if isinstance(i, Rejection)]
    assert sorted(r.key if hasattr(r, "key") else r["key"] for r in records) == \
        ["telegram:777:1", "telegram:777:3", "telegram:777:5"], "the lines after the long one are normalized"
    [rejected] = rejections
    assert rejected.line == 2 and f"longer than {CAP} bytes" in rejected.reason and "CRAWL_MAX_LINE_BYTES" in rejected.reason
    assert rejected.snippet.startswith('{"_":"Message"'), "the snippet shows where it starts"


def test_an_over_long_line_is_rejected_with_its_reason_and_the_rest_goes_on(tmp_path):
    data = _export(5 * CAP)
    context = NormalizeContext(method="export")
    _check(list(normalize_stream("telegram", io.BytesIO(gzip.compress(data)), name="f", context=context)))
    plain = tmp_path / "export.jsonl"
    plain.write_bytes(data)
    for jobs, opened in ((2, lambda: plain.open("rb")), (2, lambda: io.BytesIO(gzip.compress(data))),
                         (1, lambda: io.BytesIO(data))):  # workers reading the file by offset, or sent chunks
        with opened() as stream:
            blocks = list(normalize_encoded("telegram", stream, name="f", context=context, jobs=jobs, chunk_bytes=4096))
        keys = [orjson.loads(line)["key"] for block, _ in blocks for line in bytes(block.main).splitlines()]
        items = [{"key": k} for k in keys] + [r for _, rejected in blocks for r in rejected]
        _check(items)


def test_a_line_just_within_the_cap_is_read():
    line = _message(2, "x")
    line = _message(2, "x" * (CAP - len(line) + 1))
    assert len(line) == CAP
    items = list(normalize_stream("telegram", io.BytesIO(line + b"\n"), name="f", context=NormalizeContext()))
    assert [i.key for i in items] == ["telegram:777:2"]


def test_the_sync_quarantines_the_long_line_and_counts_the_rest(tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    batch = lake.write_raw_batch(tenant="acme", platform="telegram", source=SOURCE, batch_id="20260105T100000000000Z-r1-0000",
                                 fmt="telegram", method="export", run_id="r1", stream=io.BytesIO(gzip.compress(_export(5 * CAP))),
                                 collected_at=datetime(2026, 1, 6, tzinfo=timezone.utc))
    assert export_record_stats(lake, batch, jobs=1)["records_fetched"] == 3
    assert export_record_stats(lake, batch, jobs=2)["records_fetched"] == 3
    done = normalize_batch(lake, batch, lake.table_part(TABLE, "acme", "telegram", SOURCE, batch.manifest.batch_id))
    assert done.rows == 3
    lake.write_quarantine("acme", "telegram", SOURCE, batch.manifest.batch_id, done.rejected)  # as the asset does
    [row] = [orjson.loads(line) for path in lake.fs.glob(lake.path("quarantine/acme/telegram/*/*.jsonl"))
             for line in lake.fs.cat_file(path).splitlines()]
    assert row["line"] == 2 and f"longer than {CAP} bytes" in row["reason"]


def test_a_live_syncs_own_lines_are_read_up_to_the_response_cap():
    """A raw line the sync wrote itself is one API answer (at most 16 MiB): not cut by the export cap."""
    items = list(normalize_stream("telegram", io.BytesIO(_export(5 * CAP)), name="f", context=NormalizeContext(method="api")))
    assert not [i for i in items if isinstance(i, Rejection)] and len(items) == 4


def test_a_play_console_csv_line_over_the_cap_is_rejected_and_the_rows_after_it_are_read():
    header = "Package Name,App Version Code,Reviewer Language,Review Submit Date and Time,Review Submit Millis Since Epoch," \
             "Star Rating,Review Text,Review Link\n"

    def row(n: int, text: str) -> str:
        return (f"com.example.app,1,en,2026-01-05T10:00:00Z,1767607200000,5,{text},"
                f"http://play.google.com/console/developers/1/app/2/user-feedback/review-details?reviewId=r{n}\n")

    data = (header + row(1, "fine") + row(2, "y" * (3 * CAP)) + row(3, "also fine")).encode()
    items = list(normalize_stream("play-csv", io.BytesIO(data), name="f.csv", context=NormalizeContext()))
    rejected = [i for i in items if isinstance(i, Rejection)]
    assert [i.native_id for i in items if not isinstance(i, Rejection)] == ["r1", "r3"]
    assert [(r.line, f"longer than {CAP} bytes" in r.reason) for r in rejected] == [(3, True)]


def test_the_enrich_commands_input_reports_a_long_line_and_reads_the_rest():
    record = {"key": "x:1", "tenant": "acme", "platform": "x", "source": "acme.x.a", "kind": "post", "native_id": "1",
              "created_at": "2026-01-05T10:00:00Z", "text": "t", "text_clean": "t", "lang": "en"}
    long = orjson.dumps({**record, "key": "x:2", "text": "z" * (3 * CAP)})
    data = b"\n".join([orjson.dumps(record), long, orjson.dumps({**record, "key": "x:3"})]) + b"\n"
    run = FileRun()
    keys = [k for t in json_line_tables(io.BytesIO(data), "in.jsonl", run) for k in t.column("key").to_pylist()]
    assert keys == ["x:1", "x:3"] and [(p.line, "longer than" in p.reason) for p in run.problems] == [(2, True)]


class _LazyLongLine(io.RawIOBase):
    """A message, then a line of ``size`` bytes made as it is read (never held), then another message."""

    def __init__(self, size: int) -> None:
        self._parts: list[bytes | int] = [_message(1, "before") + b"\n", size, b"\n" + _message(3, "after") + b"\n"]

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if not self._parts:
            return 0
        part = self._parts[0]
        if isinstance(part, int):  # bytes of the long line still to make
            n = min(len(buffer), part, 1 << 20)
            buffer[:n] = b"x" * n
        else:
            n = min(len(buffer), len(part))
            buffer[:n] = part[:n]
        rest = part - n if isinstance(part, int) else part[n:]
        if rest:
            self._parts[0] = rest
        else:
            self._parts.pop(0)
        return n


def _gzip_stream(raw: io.RawIOBase) -> io.BytesIO:
    """``raw`` gzip-compressed piece by piece (the 1 GiB-line export of the issue, scaled down)."""
    out, packer = io.BytesIO(), zlib.compressobj(1, zlib.DEFLATED, 31)
    while piece := raw.read(1 << 20):
        out.write(packer.compress(piece))
    out.write(packer.flush())
    out.seek(0)
    return out


@pytest.mark.parametrize("jobs", [1, 2])
def test_reading_a_long_line_never_holds_more_than_the_cap(monkeypatch, jobs):
    """96 MiB in one line with a 1 MiB cap, plain and gzip: the reader's peak stays a few MiB."""
    cap = 1 << 20
    monkeypatch.setenv("CRAWL_MAX_LINE_BYTES", str(cap))
    compressed = _gzip_stream(_LazyLongLine(96 << 20))
    for stream in (io.BufferedReader(_LazyLongLine(96 << 20)), compressed):
        tracemalloc.start()
        try:
            blocks = list(normalize_encoded("telegram", stream, name="f", context=NormalizeContext(), jobs=jobs))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert sum(len(block) for block, _ in blocks) == 2
        assert [r.line for _, rejected in blocks for r in rejected] == [2]
        assert peak < 12 * cap, f"the reader held {peak / (1 << 20):.0f} MiB for a 96 MiB line (cap 1 MiB)"
