"""Edited X posts are one post with a history, whatever order the versions arrive in (issue 14 item 9)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from crawl_assets.cli.normalize import normalize
from crawl_assets_tests.normalize.shapes import archive_file, archive_tweet, lines, x_page, x_tweet
from crawl_assets_tests.pipeline.lake_normalize import RawInput, normalize_in_lake

V1, V2, V3 = "1790000000000000001", "1790000000000001000", "1790000000000002000"


def _version(tweet_id: str, history: list[str], text: str, retrieved: str) -> bytes:
    """One lookup page holding one version, as X returns it (history as known when it was read)."""
    page = json.loads(x_page(x_tweet(tweet_id, text, edit_history_tweet_ids=history)))
    page["__twarc"] = {"url": "https://api.x.com/2/tweets", "version": "2.14.0", "retrieved_at": retrieved}
    return json.dumps(page).encode()


OBSERVATIONS = [
    _version(V1, [V1], "first wording", "2024-05-02T11:00:10+00:00"),  # read before anyone edited it
    _version(V2, [V1, V2], "second wording", "2024-05-02T11:30:00+00:00"),
    _version(V3, [V1, V2, V3], "final wording", "2024-05-02T12:00:00+00:00"),
    _version(V1, [V1, V2, V3], "first wording", "2024-05-02T13:00:00+00:00"),  # the old id, read again later
]


def _cli(tmp_path, payload: bytes) -> dict[str, dict]:
    path = tmp_path / "pages.jsonl"
    path.write_bytes(payload)
    result = CliRunner().invoke(normalize, ["--format", "x-v2", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return {r["key"]: r for r in map(json.loads, result.stdout.splitlines())}


def _check(records: dict[str, dict]) -> None:
    live = records[f"x:{V3}"]
    assert live["metadata"]["edit_history_tweet_ids"] == [V1, V2, V3]
    assert "superseded_by" not in live["metadata"] and live["edited_at"] == live["created_at"]
    for old in (V1, V2):
        record = records[f"x:{old}"]
        assert record["metadata"]["superseded_by"] == f"x:{V3}"
        assert record["metadata"]["edit_history_tweet_ids"] == [V1, V2, V3]
        assert record["edited_at"] is None
    assert records[f"x:{V1}"]["text"] == "first wording", "an old version keeps what it said"


@settings(max_examples=24, deadline=None, database=None)
@given(order=st.permutations(range(len(OBSERVATIONS))))
def test_versions_resolve_the_same_in_any_order(tmp_path_factory, order):
    tmp_path = tmp_path_factory.mktemp("edits")
    records = _cli(tmp_path, lines(*(OBSERVATIONS[i] for i in order)))
    _check(records)
    reference = _cli(tmp_path, lines(*OBSERVATIONS))
    assert _content(records) == _content(reference)


def _content(records: dict[str, dict]) -> dict[str, dict]:
    """Records without what names the run and the input line (which the order of the input changes)."""
    return {k: {**r, "provenance": {**r["provenance"], "run_id": None, "raw_line": None}} for k, r in records.items()}


def test_a_version_seen_alone_is_left_as_it_is(tmp_path):
    records = _cli(tmp_path, lines(OBSERVATIONS[0]))
    assert "superseded_by" not in records[f"x:{V1}"]["metadata"] and records[f"x:{V1}"]["edited_at"] is None


def test_archive_edit_info_links_versions(tmp_path):
    original = archive_tweet(V1, "first wording", edit_info={"initial": {"editTweetIds": [V1, V2],
                                                              "editableUntil": "2024-05-02T12:00:00.000Z",
                                                              "editsRemaining": "4", "isEditEligible": True}})
    edit = archive_tweet(V2, "second wording", edit_info={"edit": {"initialTweetId": V1, "editControlInitial": {
        "editTweetIds": [V1, V2], "editableUntil": "2024-05-02T12:00:00.000Z", "editsRemaining": "4",
        "isEditEligible": True}}})  # fmt: skip
    path = tmp_path / "tweets.js"
    path.write_bytes(archive_file("tweets", [edit, original]))
    result = CliRunner().invoke(normalize, ["--format", "x-archive", str(path)], catch_exceptions=False)
    records = {r["key"]: r for r in map(json.loads, result.stdout.splitlines())}
    assert records[f"x:{V1}"]["metadata"]["superseded_by"] == f"x:{V2}"
    assert "superseded_by" not in records[f"x:{V2}"]["metadata"]


def test_pipeline_resolves_within_a_batch_and_marks_an_earlier_part_superseded(tmp_path):
    source = "acme.x.edited"
    outcome = normalize_in_lake(tmp_path / "lake", "x", source, [
        RawInput("20240502T110000000000Z-r1-0000", "x-v2", [OBSERVATIONS[0]], method="api"),
        RawInput("20240502T120000000000Z-r1-0000", "x-v2", [OBSERVATIONS[2], OBSERVATIONS[1]], method="api"),
    ])  # fmt: skip
    first = {r["key"]: r for r in outcome.parts["20240502T110000000000Z-r1-0000"]}
    later = {r["key"]: r for r in outcome.parts["20240502T120000000000Z-r1-0000"]}
    assert "superseded_by" not in first[f"x:{V1}"]["metadata"], "what was known then stays as it was"
    assert set(later) == {f"x:{V1}", f"x:{V2}", f"x:{V3}"}, "the earlier part's version is carried over, marked"
    _check(later)
    assert outcome.metadata["batches_failed"] == 0


def test_a_history_that_is_not_a_list_is_kept_as_read(tmp_path):
    # found by the fuzz tests: a non-list edit_history_tweet_ids stopped `crawl-assets normalize` with a TypeError
    records = _cli(tmp_path, lines(x_page(x_tweet(V1, "odd history", edit_history_tweet_ids=True))))
    assert records[f"x:{V1}"]["metadata"]["edit_history_tweet_ids"] is True
