"""Trends: a planted burst of a hashtag and of a term is found in its window with its explanation; a
steady tag, a first appearance without history and a rise below the thresholds are not trends."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from crawl_assets.enrich.base import CombineContext
from crawl_assets.enrich.trends import Trends
from crawl_assets_tests.enrich.records import T0, record, table

NOW = CombineContext("acme", datetime(2026, 4, 1, tzinfo=timezone.utc))


def _day(d: int, i: int) -> datetime:
    return T0 + timedelta(days=d, minutes=7 * i)


def _records() -> list[dict]:
    rows, n = [], 0
    for day in range(12):
        for i in range(20):  # a steady tag: 20 a day
            tags = ["steady"]
            if (day < 10 and i == 0 and day % 2 == 0) or (day == 10 and i < 30):
                tags.append("انتخابات")  # ~0.5 a day, then 20 records on day 10
            text = "weather report for the city today"
            if day == 11 and i < 12:
                text = "قیمت دلار امروز بالا رفت"  # a term burst on day 11
            rows.append(record(f"x:{n}", text, at=_day(day, i), hashtags=tags))
            n += 1
    for i in range(9):  # a tag that first appears on day 11: no history before it in the tenant? there is: days 0-10
        rows.append(record(f"x:new{i}", "hello", at=_day(11, i), hashtags=["brandnew"]))
    return rows


def test_planted_bursts_are_trends_with_their_explanation():
    enricher = Trends()
    out = enricher.combine([enricher.extract(table(_records()))], NOW)
    trends = {(r["term_kind"], r["term"]): r for r in out["trends"].to_pylist()}
    burst = trends[("hashtag", "انتخابات")]
    assert burst["window_start"] == T0 + timedelta(days=10) and burst["window_end"] == T0 + timedelta(days=11)
    assert burst["count"] == 20 and burst["baseline_counts"] == [0, 1, 0, 1, 0, 1, 0]
    assert burst["baseline"] == round(3 / 7, 4) and burst["p_value"] < 1e-10 and burst["score"] > 10
    assert "20 records" in burst["explanation"] and "[0, 1, 0, 1, 0, 1, 0]" in burst["explanation"]
    assert burst["method"] == "poisson_tail_vs_mean_of_7_preceding_24h_windows"
    for term in ("قیمت", "دلار", "بالا", "رفت"):
        assert trends[("term", term)]["window_start"] == T0 + timedelta(days=11)
    assert ("term", "امروز") not in trends  # "today": one of our Persian stop words
    assert ("hashtag", "steady") not in trends, "a steady tag does not trend"
    assert ("hashtag", "brandnew") in trends  # 9 records where the 7 windows before had none
    assert not any(r["term"] in ("the", "for") for r in trends.values()), "stop words are no terms"
    assert all(r["inferred"] and r["enricher"] == "trends" for r in trends.values())
    windows = out["windows"].to_pylist()
    counts = {(w["term"], w["window_start"]): w["count"] for w in windows if w["term_kind"] == "hashtag"}
    assert counts[("steady", T0)] == 20 and counts[("انتخابات", T0 + timedelta(days=10))] == 20


def test_no_trend_without_enough_history_or_over_a_threshold():
    rows = [record(f"x:{i}", "x", at=_day(0, i), hashtags=["early"]) for i in range(30)]
    enricher = Trends()
    assert enricher.combine([enricher.extract(table(rows))], NOW)["trends"].num_rows == 0, "first window: no history"
    strict = Trends(min_count=50)
    assert strict.combine([strict.extract(table(_records()))], NOW)["trends"].num_rows == 0


def test_a_record_counts_once_in_its_latest_observation():
    enricher = Trends(min_history=1, history=1, terms=False)
    base = [record(f"x:b{i}", "calm", at=_day(0, i), hashtags=["calm"]) for i in range(5)]
    first = [record(f"x:{i}", "noise", at=_day(1, i), hashtags=["spike"]) for i in range(10)]
    edited = [record(f"x:{i}", "noise", at=_day(1, i), hashtags=[]) for i in range(10)]  # tag removed by an edit
    parts = [enricher.extract(table(base)), enricher.extract(table(first))]
    assert ("hashtag", "spike") in {(r["term_kind"], r["term"]) for r in enricher.combine(parts, NOW)["trends"].to_pylist()}
    parts.append(enricher.extract(table(edited)))
    assert enricher.combine(parts, NOW)["trends"].num_rows == 0


def test_hourly_windows_and_parameters():
    enricher = Trends(window_hours=1, terms=False)
    assert enricher.stamp != Trends().stamp
    part = enricher.extract(table(_records()))
    assert set(part.column("term_kind").to_pylist()) == {"hashtag", "record"}
    with pytest.raises(ValueError, match="min_history"):
        Trends(history=2, min_history=3)


def test_trend_documents():
    enricher = Trends()
    out = enricher.combine([enricher.extract(table(_records()))], NOW)
    docs = list(enricher.documents("trends", out["trends"], NOW))
    assert len(docs) == out["trends"].num_rows and list(enricher.documents("windows", out["windows"], NOW)) == []
    doc = next(d for d in docs if d["trends"]["term"] == "انتخابات")
    assert doc["kind"] == "trend" and doc["created_at"] == "2026-03-11T00:00:00Z"
    assert doc["trends"]["window_hours"] == 24 and len(doc["key"].encode()) < 100
