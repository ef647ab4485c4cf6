"""Golden tests of formats ``play`` (reviews.list pages) and ``play-csv`` (Play Console export, UTF-16)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from crawl_assets.cli.normalize import normalize
from crawl_assets.schema.record import Record, Rejection
from crawl_assets.sources.play.normalize import RATING_ONLY
from crawl_assets_tests.normalize.helpers import run
from crawl_assets_tests.normalize.shapes import play_csv, play_rating_row
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


def _languages(fmt: str, data: bytes) -> list[tuple[str, str | None, str | None]]:
    import io

    from crawl_assets.normalize import normalize_stream
    from crawl_assets.normalize.context import NormalizeContext

    ctx = NormalizeContext(tenant="acme", source=f"acme.{fmt}.lang", method="api", run_id="lang")
    items = normalize_stream(fmt, io.BytesIO(data), name="lang", context=ctx)
    return [(r.kind, r.lang, r.metadata.get("reviewer_language")) for r in items if isinstance(r, Record)]


def test_language_is_the_texts_not_the_devices():
    """reviewerLanguage is the device's language: a Persian review from an English device is Persian, and an
    English developer reply to it is English; the platform's value stays in metadata."""
    import json

    review = {"reviewId": "gp:L1", "authorName": "کاربر", "comments": [
        {"userComment": {"text": "برنامه خیلی خوبیه ولی کنده", "lastModified": {"seconds": "1795953600"},
                         "starRating": 4, "reviewerLanguage": "en_US"}},
        {"developerComment": {"text": "Thank you, we are working on the speed of the next release",
                              "lastModified": {"seconds": "1795954200"}}}]}
    line = {"crawl": {"endpoint": "reviews.list", "package": "com.acme.app", "retrieved_at": "2026-11-30T04:00:00+00:00"},
            "response": {"reviews": [review]}}
    assert _languages("play", json.dumps(line).encode()) == [("review", "fa", "en_US"), ("reply", "en", None)]
    header = "Package Name,Reviewer Language,Review Submit Millis Since Epoch,Star Rating,Review Text," \
             "Developer Reply Millis Since Epoch,Developer Reply Text,Review Link\n"
    row = 'com.acme.app,fa,1704449472000,5,"Great app, works perfectly on my phone",1704614400000,' \
          '"ممنون از نظر شما، خوشحالیم که راضی هستید",https://play.google.com/x?reviewId=gp:L2\n'
    assert _languages("play-csv", (header + row).encode("utf-8")) == [("review", "en", "fa"), ("reply", "fa", None)]


def test_rating_without_review_is_a_non_post(tmp_path):
    """Issue 29 item 10: Play writes a row per rating without a review; it is counted, not malformed."""
    review = ["com.acme.app", "231", "2.3.1", "en", "a52q", "2024-02-01T10:00:00Z", "1706781600000",
              "2024-02-01T10:00:00Z", "1706781600000", "5", "", "Love it", "", "", "",
              "https://play.google.com/console/developers/1/app/2/user-feedback/review-details?reviewId=gp:AOqpTOH9"]
    data = play_csv(play_rating_row(4, "2024-02-01T09:00:00Z", 1706778000000), review)
    records, rejections = run("play-csv", data)
    assert [r.key for r in records] == ["play:com.acme.app:gp:AOqpTOH9"]
    assert [(r.line, r.error, r.reason) for r in rejections] == [(2, False, RATING_ONLY)]
    path = tmp_path / "reviews_com.acme.app_202402.csv"
    path.write_bytes(data)
    result = CliRunner().invoke(normalize, ["--format", "play-csv", "--strict", str(path)])
    assert result.exit_code == 0, result.stderr
    assert "0 malformed" in result.stderr and f"1 skipped ({RATING_ONLY})" in result.stderr
