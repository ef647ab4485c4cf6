"""``NormalizeContext.text_fields=False`` (the counting pass of an export sync) skips text cleaning and language
detection only: the same records, keys, times and rejections as a full read."""

from __future__ import annotations

import io

import pytest

from crawl_assets.cli.demo import sample_file
from crawl_assets.normalize import NormalizeContext, normalize_documents
from crawl_assets.schema import Rejection

COUNTED = ("key", "created_at", "edited_at", "deleted", "deleted_at", "kind", "native_id")


@pytest.mark.parametrize(("fmt", "sample"), [("telegram-export", "telegram_export/result.json"),
                                             ("x-v2", "x_v2_recording.jsonl")])
def test_counting_pass_reads_the_same_records(fmt, sample):
    payload = sample_file(sample).read_bytes()

    def read(text_fields: bool) -> list:
        context = NormalizeContext(tenant="t", source="s", text_fields=text_fields)
        return list(normalize_documents(fmt, io.BytesIO(payload), name="f", context=context))

    full, counted = read(True), read(False)
    assert len(full) == len(counted) > 5
    for a, b in zip(full, counted, strict=True):
        if isinstance(a, Rejection):
            assert a == b
        else:
            assert {k: a[k] for k in COUNTED} == {k: b[k] for k in COUNTED}
    texts = [d for d in counted if isinstance(d, dict) and d["text"]]
    assert texts and all(d["text_clean"] == "" for d in texts)  # nothing cleaned (X names the language itself)
