"""Aggregations, trends and author profiles on the pipeline-built index."""

from __future__ import annotations

import math

from crawl_assets_tests.api.corpus import NEW, RISING, STEADY, TREND_UNTIL


def test_hashtags_per_day_and_a_time_zone_moves_the_day_boundary(demo) -> None:
    days = demo("/v1/aggregations/timeline", interval="day", hashtag=RISING, source="gen-a",
                start="2026-03-01", end="2026-03-06")
    assert [(b["start"][:10], b["count"]) for b in days["buckets"]] == [
        ("2026-03-01", 1), ("2026-03-02", 1), ("2026-03-03", 1), ("2026-03-04", 1), ("2026-03-05", 15)]
    top = demo("/v1/aggregations/top/hashtags", source="gen-a", start="2026-03-05", end="2026-03-06", size=3)
    assert [(b["value"], b["count"]) for b in top["buckets"]] == [(RISING, 15), (STEADY, 10), (NEW, 5)]
    # 08:00 UTC posts are still on the same day in Tehran (+03:30); 2 h earlier in UTC-10 they are the day before.
    honolulu = demo("/v1/aggregations/timeline", interval="day", hashtag=STEADY, source="gen-a", tz="Pacific/Honolulu")
    assert honolulu["buckets"][0]["start"].startswith("2026-02-28")


def test_top_authors_languages_and_counts(demo) -> None:
    authors = demo("/v1/aggregations/top/authors", source="gen-a", size=2)["buckets"]
    assert authors[0]["value"] == "504" and authors[0]["handle"] == "bot_d" and authors[0]["platform"] == "x"
    langs = demo("/v1/aggregations/top/languages")
    assert langs["buckets"][0]["value"] == "fa" and sum(b["count"] for b in langs["buckets"]) + langs["missing"] + langs["other"] > 600
    counts = demo("/v1/aggregations/counts", source="gen-a")
    assert counts["deleted"] == 1 and counts["superseded"] == 1 and counts["edited"] >= 1
    assert counts["records"] == counts["live"] + counts["deleted"]


def test_top_mentioned_counts_the_records_a_mention_filter_finds(demo) -> None:
    top = demo("/v1/aggregations/top/mentions", source="gen-a", size=3)["buckets"]
    assert top[0]["value"] == "analyst_b" and top[0]["count"] >= 20, top
    assert top[0]["count"] == demo("/v1/search", mention="analyst_b", source="gen-a", size=1)["total"]
    assert [b["count"] for b in top] == sorted((b["count"] for b in top), reverse=True)


def test_a_rising_hashtag_scores_first_and_its_score_can_be_recomputed(demo) -> None:
    got = demo("/v1/trends", field="hashtags", until=TREND_UNTIL, window="1d", baseline=4, source="gen-a")
    items = {i["item"]: i for i in got["items"]}
    assert got["items"][0]["item"] == RISING and NEW in items and STEADY not in items
    rising = items[RISING]
    assert rising["count"] == 15 and rising["baseline_counts"] == [1, 1, 1, 1]
    windows = [w["records"] for w in got["windows"]]
    assert windows[0] == 30 and all(n >= 11 for n in windows[1:])  # other posts of gen-a fall in the baseline too
    expected = 4 / sum(windows[1:]) * 30
    assert math.isclose(rising["expected"], expected, rel_tol=1e-3)
    assert math.isclose(rising["score"], (15 - expected) / math.sqrt(expected + 1), rel_tol=1e-3)
    assert items[NEW]["expected"] == 0 and items[NEW]["score"] == 5
    words = demo("/v1/trends", field="words", until=TREND_UNTIL, window="1d", baseline=4, source="gen-a", min_count=5)
    assert "لرزش" in {i["item"] for i in words["items"]}, words["items"][:5]


def test_an_author_profile_from_observed_data(demo) -> None:
    prof = demo("/v1/authors/analyst_b")
    assert prof["author_ids"] == ["502"] and prof["handles"] == ["analyst_b"]
    assert prof["degrees"]["in"]["reply"] >= 1, "9003 replies to analyst_b's 9002"
    assert prof["degrees"]["in"]["mention"] >= 19, "the rising posts mention @analyst_b"
    assert prof["degrees"]["out"]["reply"] >= 1 and prof["degrees"]["out"]["quote"] >= 1
    assert prof["inferred"] is None and prof["degrees"]["in_degree_complete"] is True
    assert {b["value"] for b in prof["hashtags"]} >= {NEW}
    assert sum(b["count"] for b in prof["activity"]["buckets"]) == prof["records"]
    by_id = demo("/v1/authors/502")
    assert by_id["records"] == prof["records"]
    demo("/v1/authors/nobody_at_all", expect=404)


def test_inferred_features_come_only_from_the_enrichment_layer_labelled(world, demo, tmp_path) -> None:
    """No pipeline step fills the authors index yet: an author document with model-made ``enrichment`` is
    written here through the project's sink, for demo and (other values) for rival, the same author id."""
    from crawl_assets.index.sink import index_documents

    before = demo("/v1/authors/bot_d")
    assert before["observed_profile"] is None and before["inferred"] is None
    doc = {"key": "x:504", "platform": "x", "tenant": "demo", "source": "demo.x.gen-a", "author_id": "504",
           "handle": "bot_d", "display_name": "Bot D", "verified": False, "last_seen": "2026-03-07T00:00:00Z",
           "provenance": {"collected_at": "2026-03-07T00:00:00Z", "method": "api"},
           "enrichment": {"bot_score": 0.93, "model": "example-classifier-1"}}
    rival = {**doc, "tenant": "rival", "source": "rival.x.gen-r", "display_name": "Rival's view",
             "enrichment": {"bot_score": 0.01, "model": "rival-model"}}
    for d in (doc, rival):
        stats = index_documents(world.es, [d], family="authors", tenant=d["tenant"], deadletter_root=str(tmp_path))
        assert stats.failed == 0
    world.es.indices.refresh(index="crawl-authors-*")
    prof = demo("/v1/authors/bot_d")
    assert prof["observed_profile"]["display_name"] == "Bot D" and "enrichment" not in prof["observed_profile"]
    assert prof["inferred"] == {"source": "enrichment (model-made, not observed)",
                                "features": {"bot_score": 0.93, "model": "example-classifier-1"}}
    assert {k: v for k, v in prof.items() if k not in ("observed_profile", "inferred")} == \
        {k: v for k, v in before.items() if k not in ("observed_profile", "inferred")}, "observed figures unchanged"


def test_a_jalali_timeline_follows_jalali_months_and_saturday_weeks_in_tehran(demo) -> None:
    months = demo("/v1/aggregations/timeline", interval="month", calendar="jalali", hashtag=RISING, source="gen-a",
                  start="2026-03-01", end="2026-03-06")
    assert months["calendar"] == "jalali" and months["time_zone"] == "Asia/Tehran"
    # Esfand 1404 began on 2026-02-20 in Tehran: one bucket, from its local midnight, with all 19 records
    assert [(b["jalali"], b["start"], b["count"]) for b in months["buckets"]] == [
        ("1404-12", "2026-02-20T00:00:00+03:30", 19)]
    weeks = demo("/v1/aggregations/timeline", interval="week", calendar="jalali", hashtag=RISING, source="gen-a",
                 start="2026-03-01", end="2026-03-06")
    assert [(b["jalali"], b["start"][:10], b["count"]) for b in weeks["buckets"]] == [("1404-12-09", "2026-02-28", 19)], \
        "the week from Saturday 9 Esfand"


def test_jalali_names_on_an_authors_activity_and_on_trend_windows(demo) -> None:
    prof = demo("/v1/authors/analyst_b", interval="month", calendar="jalali")
    gregorian = demo("/v1/authors/analyst_b", interval="month")
    buckets = prof["activity"]["buckets"]
    assert buckets and all(b["jalali"].startswith(("1404-", "1405-")) and b["count"] for b in buckets)
    assert sum(b["count"] for b in buckets) == sum(b["count"] for b in gregorian["activity"]["buckets"])
    assert all(b["start"].endswith("+03:30") for b in buckets), "Jalali months from Tehran's midnights"
    got = demo("/v1/trends", field="hashtags", until=TREND_UNTIL, window="1d", baseline=1, source="gen-a",
               calendar="jalali")
    assert got["windows"][0]["jalali"] == ["1404-12-14T03:30", "1404-12-15T03:30"], "UTC midnights in Tehran"
