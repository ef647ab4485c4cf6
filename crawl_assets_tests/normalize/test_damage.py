"""One bad byte or one absurd number costs one value at most (issue 14 items 2 and 3)."""

from __future__ import annotations

import json

import orjson
import pytest
from click.testing import CliRunner

from crawl_assets.cli.normalize import normalize
from crawl_assets.schema import Record
from crawl_assets.schema.record import PROVENANCE_FLAGS, record_json_schema
from crawl_assets_tests.normalize.helpers import run
from crawl_assets_tests.normalize.shapes import (
    archive_file, archive_tweet, export_file, export_message, lines, telethon_message, x_page, x_tweet,
)  # fmt: skip
from crawl_assets_tests.pipeline.lake_normalize import RawInput, normalize_in_lake

BAD = b"\xff\xfe"  # never valid in UTF-8


def _flags(record: Record) -> list[str]:
    return list(record.provenance.flags)


def _break(payload: bytes, marker: str) -> bytes:
    """``payload`` with invalid bytes spliced into the text ``marker``."""
    encoded = marker.encode()
    assert encoded in payload
    return payload.replace(encoded, encoded[:3] + BAD + encoded[3:], 1)


def test_archive_bad_byte_costs_one_character_of_one_tweet():
    payload = archive_file("tweets", [archive_tweet("1790000000000000001", "first post here"),
                                      archive_tweet("1790000000000000002", "second post here"),
                                      archive_tweet("1790000000000000003", "third post here")])
    records, rejections = run("x-archive", _break(payload, "second post"))
    assert not rejections
    assert [r.native_id[-1] for r in records] == ["1", "2", "3"]
    assert "\ufffd" in records[1].text and records[1].text.endswith("ond post here")
    assert [_flags(r) for r in records] == [[], ["invalid_utf8_replaced"], []]


def test_export_bad_byte_costs_one_character_of_one_message():
    payload = export_file(export_message(2, "سلام دوستان"), export_message(3, "خبر فوری امروز"),
                          export_message(4, "پایان"))
    records, rejections = run("telegram-export", _break(payload, "خبر فوری"))
    assert not rejections and len(records) == 3
    assert [_flags(r) for r in records] == [[], ["invalid_utf8_replaced"], []]
    assert "\ufffd" in records[1].text


def test_x_page_bad_byte_flags_only_the_tweet_it_is_in():
    page = x_page(x_tweet("1790000000000000001", "one"), x_tweet("1790000000000000002", "two words"),
                  x_tweet("1790000000000000003", "three"))
    records, rejections = run("x-v2", lines(_break(page, "two words")))
    assert not rejections and len(records) == 3, "the page is not rejected whole"
    assert [_flags(r) for r in records] == [[], ["invalid_utf8_replaced"], []]
    in_includes = x_page(x_tweet("1790000000000000004", "four"), x_tweet("1790000000000000005", "five"))
    records, _ = run("x-v2", lines(in_includes.replace(b'"acme"', b'"ac' + BAD + b'me"')))
    assert [_flags(r) for r in records] == [["invalid_utf8_replaced"]] * 2, "damage in includes reaches every tweet"
    assert records[0].author_handle == "ac\ufffd\ufffdme"


def test_telethon_line_bad_byte_flags_that_message():
    payload = lines(telethon_message(1, "hello there"), _break(orjson.dumps(telethon_message(2, "second one")),
                                                               "second"), telethon_message(3, "third"))
    records, rejections = run("telegram", payload)
    assert not rejections and [_flags(r) for r in records] == [[], ["invalid_utf8_replaced"], []]


def test_reasons_are_text_not_a_bytes_repr():
    broken = export_file(export_message(2, "ok")).replace(b'"messages"', b'"messages" ' + BAD + b" oops", 1)
    _, rejections = run("telegram-export", broken)
    assert rejections
    for rejection in rejections:
        assert "b'" not in rejection.reason and "\\x" not in rejection.reason, rejection.reason


def test_cli_counts_nothing_malformed_for_a_repaired_file(tmp_path):
    path = tmp_path / "tweets.js"
    path.write_bytes(_break(archive_file("tweets", [archive_tweet("1790000000000000001", "first post"),
                                                    archive_tweet("1790000000000000002", "second post")]),
                            "first post"))
    result = CliRunner().invoke(normalize, ["--format", "x-archive", str(path)], catch_exceptions=False)
    assert result.exit_code == 0 and "2 records" in result.stderr and "0 malformed" in result.stderr


HUGE = 2**70


def test_counter_beyond_64_bits_is_set_aside_with_its_digits():
    records, rejections = run("telegram", lines(telethon_message(7, "big views", views=HUGE, forwards=5)))
    assert not rejections
    (record,) = records
    assert record.metrics.views is None and record.metrics.forwards == 5
    assert record.metadata["out_of_range"] == {"metrics.views": str(HUGE)}
    assert _flags(record) == ["value_out_of_range"]


def test_metadata_integer_beyond_64_bits_becomes_its_string():
    poll = {"question": "Which?", "closed": False, "total_voters": HUGE, "answers": [{"text": "a", "voters": 1}]}
    records, rejections = run("telegram-export", export_file(export_message(2, "vote", poll=poll)))
    assert not rejections
    assert records[0].metadata["poll"]["total_voters"] == str(HUGE)
    assert _flags(records[0]) == ["value_out_of_range"]


def test_x_counter_beyond_64_bits_takes_the_slow_path_and_is_set_aside():
    tweet = x_tweet("1790000000000000001", "numbers")
    tweet["public_metrics"]["like_count"] = 2**64 + 5
    records, rejections = run("x-v2", lines(x_page(tweet)))
    assert not rejections and records[0].metrics.likes is None and records[0].metrics.reposts == 1
    assert "metrics.likes" in records[0].metadata["out_of_range"]


def test_pipeline_is_not_blocked_by_a_huge_counter(tmp_path):
    source = "acme.telegram.news"
    first = RawInput("20260101T000000000000Z-r1-0000", "telegram",
                     [orjson.dumps(telethon_message(1, "ok")), json.dumps(telethon_message(2, "huge", views=HUGE)).encode()],
                     method="api")  # fmt: skip
    later = RawInput("20260102T000000000000Z-r1-0000", "telegram", [orjson.dumps(telethon_message(3, "later"))],
                     method="api")
    outcome = normalize_in_lake(tmp_path / "lake", "telegram", source, [first, later])
    assert outcome.metadata["batches_failed"] == 0 and outcome.metadata["records_written"] == 3
    huge = next(r for r in outcome.parts[first.batch_id] if r["native_id"] == "2")
    assert huge["metrics"]["views"] is None and huge["provenance"]["flags"] == ["value_out_of_range"]
    assert [r["native_id"] for r in outcome.parts[later.batch_id]] == ["3"]


def test_provenance_flags_are_a_closed_documented_vocabulary():
    schema = record_json_schema()
    flags = schema["$defs"]["Provenance"]["properties"]["flags"]
    assert set(flags["items"]["enum"]) == set(PROVENANCE_FLAGS)
    docs = (__import__("pathlib").Path(__file__).resolve().parents[2] / "docs" / "SCHEMA.md").read_text()
    assert all(f"`{flag}`" in docs for flag in PROVENANCE_FLAGS)
    records, _ = run("telegram", lines(telethon_message(1, "x")))
    data = records[0].model_dump(mode="json")
    data["provenance"]["flags"] = ["made_up"]
    with pytest.raises(ValueError):
        Record.model_validate(data)
