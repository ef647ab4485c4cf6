"""A batch our own collector wrote is read as the format it named: no other format's signature is looked for
(only a file whose format a person named, an export or the CLI's input, is refused as "looks like" another)."""

from __future__ import annotations

import io

import pytest

from crawl_assets.normalize import NormalizeContext, normalize_stream
from crawl_assets.normalize.parallel import normalize_encoded
from crawl_assets.schema import Rejection
from crawl_assets_tests.normalize.helpers import SAMPLES

X_PAGES = (SAMPLES / "x_v2_recording.jsonl").read_bytes()


def _looks_like(rejections: list[Rejection]) -> list[str]:
    return [r.reason for r in rejections if "looks like" in (r.reason or "")]


@pytest.mark.parametrize("method", ["export", "api"])
def test_only_a_format_a_person_named_is_sniffed(method):
    # X pages read as Telegram: a person's wrong choice is named; a collector's batch is read as it said
    items = list(normalize_stream("telegram", io.BytesIO(X_PAGES), name="b", context=NormalizeContext(method=method)))
    refused = _looks_like([i for i in items if isinstance(i, Rejection)])
    if method == "export":
        assert len(items) == 1 and refused and "--format x-v2" in refused[0]
    else:
        assert items and refused == [], "the collector's batch went through its own normalizer"


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_encoded_path_sniffs_only_what_a_person_named(jobs):
    def refused(method: str) -> list[str]:
        context = NormalizeContext(method=method)
        return _looks_like([r for _, rejections in normalize_encoded(
            "telegram", io.BytesIO(X_PAGES), name="b", context=context, jobs=jobs, chunk_bytes=4096)
            for r in rejections])

    assert refused("export") and refused("api") == []
