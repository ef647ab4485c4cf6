"""X input shapes real clients and archives produce (issue 14 items 6, 7, 8, 12 and 14's archive part; issue 29
item 14)."""

from __future__ import annotations

from datetime import datetime, timezone

from click.testing import CliRunner

from crawl_assets.cli.normalize import normalize
from crawl_assets.sources.x.ids import id_time
from crawl_assets_tests.normalize.helpers import CONTEXT, run
from crawl_assets_tests.normalize.shapes import (
    archive_file, archive_media_tweet, archive_tweet, lines, x_default_page, x_media_tweet, x_not_authorized,
    x_not_found, x_page, x_tweet,
)  # fmt: skip
from crawl_assets_tests.pipeline.lake_normalize import RawInput, normalize_in_lake

A, B, C = "1790000000000000001", "1790000000000000002", "1790000000000000003"


def test_default_fields_page_gives_records_with_time_from_the_id():
    records, rejections = run("x-v2", lines(x_default_page((A, "Hello from the default fields"), (B, "Second one"))))
    assert not rejections
    assert [r.native_id for r in records] == [A, B]
    assert records[0].created_at == id_time(A) and records[0].provenance.flags == ["created_at_from_id"]
    assert records[0].metadata["edit_history_tweet_ids"] == [A] and records[0].author_id is None
    assert records[0].lang == "en", "no lang field: detected"


def test_default_fields_without_a_snowflake_says_the_field_is_missing():
    _, rejections = run("x-v2", lines(x_default_page(("20", "an id from 2006"))))
    (rejection,) = rejections
    assert "data[0].created_at" in rejection.reason and "missing" in rejection.reason
    assert "tweet.fields=created_at" in rejection.reason


def test_errors_page_without_data_becomes_evidence_per_post():
    records, rejections = run("x-v2", lines({"errors": [x_not_found(A), x_not_authorized(B)]}))
    assert not rejections
    gone, hidden = records
    assert (gone.key, gone.deleted, gone.metadata["unavailable"]) == (f"x:{A}", True, "not_found")
    assert gone.deleted_at == CONTEXT.collected_at and gone.created_at == id_time(A)
    assert gone.metadata["tombstone"] is True and gone.text == ""
    assert gone.metadata["x_error"]["title"] == "Not Found Error"
    assert (hidden.deleted, hidden.metadata["unavailable"], hidden.deleted_at) == (False, "not_authorized", None)


def test_lookup_page_with_data_and_errors_records_both():
    import orjson

    page = orjson.loads(x_page(x_tweet(A, "still here")))
    page["errors"] = [x_not_found(B), {**x_not_found(C), "parameter": "referenced_tweets.id", "section": "includes"}]
    records, rejections = run("x-v2", lines(page))
    assert not rejections
    assert [(r.native_id, r.deleted) for r in records] == [(A, False), (B, True)], "an expansion's error is context"


def test_cli_summary_counts_unavailable_posts(tmp_path):
    import orjson

    path = tmp_path / "lookup.jsonl"
    path.write_bytes(orjson.dumps({"errors": [x_not_found(A), x_not_found(B)]}) + b"\n")
    result = CliRunner().invoke(normalize, ["--format", "x-v2", str(path)], catch_exceptions=False)
    assert result.exit_code == 0 and "2 records" in result.stderr
    assert "2 unavailable (deleted, protected or suspended posts" in result.stderr


def test_pipeline_merges_an_unavailable_post_onto_its_last_observation(tmp_path):
    import orjson

    source = "acme.x.lookups"
    outcome = normalize_in_lake(tmp_path / "lake", "x", source, [
        RawInput("20260101T000000000000Z-r1-0000", "x-v2", [x_page(x_tweet(A, "protected later"))], method="api"),
        RawInput("20260102T000000000000Z-r1-0000", "x-v2", [orjson.dumps({"errors": [x_not_authorized(A)]})],
                 method="api"),
    ])  # fmt: skip
    (merged,) = outcome.parts["20260102T000000000000Z-r1-0000"]
    assert merged["text"] == "protected later" and merged["deleted"] is False
    assert merged["metadata"]["unavailable"] == "not_authorized"


def test_deleted_tweets_file_gives_deleted_records():
    deleted = archive_tweet(A, "I take that back", deleted_at="Fri May 03 09:30:00 +0000 2024")
    records, rejections = run("x-archive", archive_file("deleted_tweets", [deleted]))
    assert not rejections
    (record,) = records
    assert record.deleted is True and record.deleted_at == datetime(2024, 5, 3, 9, 30, tzinfo=timezone.utc)
    assert record.text == "I take that back"
    live, _ = run("x-archive", archive_file("tweets", [archive_tweet(A, "I take that back")]))
    assert live[0].deleted is False and live[0].deleted_at is None


def test_older_tweet_js_name_is_read_and_other_archive_files_are_refused_by_kind():
    records, _ = run("x-archive", archive_file("tweet", [archive_tweet(A, "from a 2020 archive")]))
    assert [r.native_id for r in records] == [A]
    likes = archive_file("like", [{"like": {"tweetId": A, "fullText": "liked text"}}])
    records, rejections = run("x-archive", likes)
    assert not records
    (rejection,) = rejections
    assert "'like' file (like.js)" in rejection.reason and "deleted-tweets.js" in rejection.reason


def test_html_entities_are_unescaped_for_search_only():
    text = "R&amp;D budget &gt; last year &lt;3"
    records, _ = run("x-v2", lines(x_page(x_tweet(A, text))))
    assert records[0].text == text
    assert records[0].text_clean == "R&D budget > last year <3"
    archived, _ = run("x-archive", archive_file("tweets", [archive_tweet(B, text)]))
    assert archived[0].text == text and archived[0].text_clean == "R&D budget > last year <3"


def test_archive_root_posts_are_their_own_conversation():
    reply = archive_tweet(B, "@acme agreed", in_reply_to_status_id_str=A, in_reply_to_status_id=A)
    records, _ = run("x-archive", archive_file("tweets", [archive_tweet(A, "a root post"), reply,
                                                          archive_tweet(C, "RT @acme: a root post")]))
    assert [r.conversation_id for r in records] == [f"x:{A}", None, f"x:{C}"]
    assert records[1].reply_to == f"x:{A}"


def test_odd_error_objects_name_no_post():
    odd = [{**x_not_found(A), "parameter": ["ids"]}, {**x_not_found(B), "resource_id": 7}, "junk", None]
    records, rejections = run("x-v2", lines({"errors": odd}))
    assert not records and [r.error for r in rejections] == [False], "counted as an error page, never a crash"


def test_media_permalinks_are_not_links_without_includes_media():
    """Issue 29 item 14: a page requested without the media expansion (no media_key on the url entities)."""
    records, rejections = run("x-v2", lines(x_page(x_media_tweet(A))))
    assert not rejections
    (post,) = records
    assert post.urls == ["https://example.com/read"]
    assert [(m.type, m.id) for m in post.media] == [("unknown", f"3_{A}"), ("unknown", f"7_{A}")]


def test_archive_media_sizes_and_duration_from_their_strings():
    """Issue 29 item 14: tweets.js writes sizes and video_info numbers as strings."""
    records, _ = run("x-archive", archive_file("tweets", [archive_media_tweet(A)]))
    photo, video = records[0].media
    assert (photo.type, photo.width, photo.height, photo.duration) == ("photo", 2048, 1152, None)
    assert (video.type, video.width, video.height, video.duration, video.mime) == ("video", 1280, 720, 30.03, "video/mp4")
    assert video.url.endswith("1280x720/a.mp4?tag=12") and records[0].urls == []
