"""Normalizing line formats on worker processes gives exactly the one-process output, line numbers included."""

from __future__ import annotations

import io

from crawl_assets.normalize import NormalizeContext
from crawl_assets.normalize.parallel import normalize_encoded
from crawl_assets_tests.normalize.helpers import SAMPLES


def test_workers_keep_order_lines_and_output():
    pages = (SAMPLES / "x_v2_recording.jsonl").read_bytes().splitlines()
    payload = b"\n".join(pages[:4] + [b"{broken", b""] + pages[4:]) + b"\n"
    context = NormalizeContext(tenant="t", source="s", run_id="r", raw_pointer="f")

    def run(jobs: int) -> list:
        return list(normalize_encoded("x-v2", io.BytesIO(payload), name="f", context=context, jobs=jobs,
                                      chunk_bytes=20_000))  # fmt: skip

    one, two = run(1), run(2)
    assert one == two
    rejections = [item for item in one if not isinstance(item, tuple)]
    assert [(r.line, r.reason.split(":")[0]) for r in rejections] == [(5, "invalid JSON")]
    assert b'"raw_line":13' in one[-1][3]  # the last page is line 13 of the whole input
    assert len([item for item in one if isinstance(item, tuple)]) == 165
