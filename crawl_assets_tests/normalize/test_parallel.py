"""Normalizing line formats on several processes gives exactly the one-process output, line numbers included."""

from __future__ import annotations

import io
from pathlib import Path

from crawl_assets.normalize import Deduper, NormalizeContext
from crawl_assets.normalize.parallel import normalize_encoded
from crawl_assets.normalize.reading import line_blocks
from crawl_assets_tests.normalize.helpers import SAMPLES


def _run(payload: bytes, jobs: int, path: Path | None = None) -> tuple[list[bytes], list[bytes], list]:
    """(record lines, edge lines, rejections) of the blocks, without dedupe; from a file at ``path`` if given
    (workers then read their chunks from the file themselves)."""
    context = NormalizeContext(tenant="t", source="s", run_id="r", raw_pointer="f")
    records, edges, rejections = [], [], []
    if path is not None:
        path.write_bytes(payload)
    with open(path, "rb") if path is not None else io.BytesIO(payload) as stream:
        blocks = list(normalize_encoded("x-v2", stream, name="f", context=context, jobs=jobs, chunk_bytes=20_000))
    for block, rejected in blocks:
        records += bytes(block.main).splitlines()
        edges += bytes(block.side).splitlines()
        rejections += rejected
        assert len(block) == len(block.main_ends) == len(block.side_ends) == len(block.hashes) // 16
    return records, edges, rejections


def test_workers_keep_order_lines_and_output(tmp_path):
    pages = (SAMPLES / "x_v2_recording.jsonl").read_bytes().splitlines()
    payload = b"\n".join(pages[:4] + [b"{broken", b""] + pages[4:]) + b"\n"
    one, two, three = _run(payload, 1), _run(payload, 2), _run(payload, 3)
    assert one == two == three == _run(payload, 2, tmp_path / "pages.jsonl")
    records, edges, rejections = one
    assert [(r.line, r.reason.split(":")[0]) for r in rejections] == [(5, "invalid JSON")]
    assert b'"raw_line":13' in records[-1]  # the last page is line 13 of the whole input
    assert len(records) == 165 and len(edges) > 165


def test_chunks_are_whole_lines_with_their_first_line_number():
    payload = b"a\nbb\n" + b"c" * 50 + b"\n\nd"  # a line longer than a chunk, a blank line, no final newline
    chunks = list(line_blocks(io.BytesIO(payload), 4, cap=1000))
    assert b"".join(blob for _, _, blob in chunks) == payload
    assert all(blob.endswith(b"\n") for _, _, blob in chunks[:-1])
    before = [b"".join(b for _, _, b in chunks[:i]) for i in range(len(chunks))]
    assert [(first, offset) for first, offset, _ in chunks] == [(1 + b.count(b"\n"), len(b)) for b in before]


def test_deduper_writes_winning_blocks_whole_and_picks_records_from_mixed_ones():
    pages = (SAMPLES / "x_v2_recording.jsonl").read_bytes()
    context = NormalizeContext(tenant="t", source="s", run_id="r", raw_pointer="f")
    deduper, records = Deduper(), []
    for block, _ in normalize_encoded("x-v2", io.BytesIO(pages), name="f", context=context, jobs=1):
        deduper.add_block(block)
        records += bytes(block.main).splitlines()
    main, side = io.BytesIO(), io.BytesIO()
    deduper.write_winners(main, side)
    written = main.getvalue().splitlines()
    assert len(written) == deduper.unique == len(records) - 15  # the retried page's 15 tweets
    assert len(set(written)) == len(written) and set(written) <= set(records)
    assert side.getvalue().endswith(b"\n")
