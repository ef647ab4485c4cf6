"""Golden tests of formats ``play`` (reviews.list pages) and ``play-csv`` (Play Console export, UTF-16)."""

from __future__ import annotations

from pathlib import Path

from crawl_assets.schema.record import Record, Rejection
from crawl_assets_tests.sources.feedback_helpers import assert_golden

GOLDEN = Path(__file__).parent / "golden"


def test_golden_reviews_list():
    items = assert_golden("play", GOLDEN, "input.jsonl", "expected.jsonl")
    records = [i for i in items if isinstance(i, Record)]
    assert [(r.key, r.kind) for r in records] == [
        ("play:com.acme.app:gp:AOqpTOG1", "review"), ("play:com.acme.app:gp:AOqpTOG1:reply", "reply"),
        ("play:com.acme.app:gp:AOqpTOG2", "review")]
    assert records[1].reply_to == records[0].key and records[1].lang == "fa"
    assert records[0].metadata["rating"] == 2 and records[2].metadata["title"] == "Great"
    reasons = [i.reason for i in items if isinstance(i, Rejection)]
    assert reasons == ["reviews[2]: no userComment", "field 'crawl.package': missing or empty"]


def test_golden_console_export():
    items = assert_golden("play-csv", GOLDEN, "export.csv", "expected_csv.jsonl")
    records = [i for i in items if isinstance(i, Record)]
    assert [r.key for r in records] == ["play:com.acme.app:gp:AOqpTOH3", "play:com.acme.app:gp:AOqpTOH3:reply",
                                        "play:com.acme.app:gp:AOqpTOH4"]
    assert records[0].text == "برنامه باز نمی‌شود\nبعد از آپدیت" and records[0].edited_at is not None
    assert records[2].text == 'Works, but, "slow" on start' and records[2].metadata["title"] == "Nice"
    [bad] = [i for i in items if isinstance(i, Rejection)]
    assert bad.line == 5 and "Review Link" in bad.reason
