"""Trends: a planted burst of a hashtag and of a term is found in its window with its explanation; a
steady tag, a first appearance without history and a rise below the thresholds are not trends."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pyarrow.compute as pc
import pytest

from crawl_assets.enrich.base import CombineContext
from crawl_assets.enrich.trends import RisingTerms, _cells
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
    enricher = RisingTerms()
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
    enricher = RisingTerms()
    assert enricher.combine([enricher.extract(table(rows))], NOW)["trends"].num_rows == 0, "first window: no history"
    strict = RisingTerms(min_count=50)
    assert strict.combine([strict.extract(table(_records()))], NOW)["trends"].num_rows == 0


def test_a_record_counts_once_in_its_latest_observation():
    enricher = RisingTerms(min_history=1, history=1, terms=False)
    base = [record(f"x:b{i}", "calm", at=_day(0, i), hashtags=["calm"]) for i in range(5)]
    first = [record(f"x:{i}", "noise", at=_day(1, i), hashtags=["spike"]) for i in range(10)]
    edited = [record(f"x:{i}", "noise", at=_day(1, i), hashtags=[]) for i in range(10)]  # tag removed by an edit
    parts = [enricher.extract(table(base)), enricher.extract(table(first))]
    assert ("hashtag", "spike") in {(r["term_kind"], r["term"]) for r in enricher.combine(parts, NOW)["trends"].to_pylist()}
    parts.append(enricher.extract(table(edited)))
    assert enricher.combine(parts, NOW)["trends"].num_rows == 0


def test_hourly_windows_and_parameters():
    enricher = RisingTerms(window_hours=1, terms=False)
    assert enricher.stamp != RisingTerms().stamp
    part = enricher.extract(table(_records()))
    assert set(part.column("term_kind").to_pylist()) == {"hashtag", "record"}
    with pytest.raises(ValueError, match="min_history"):
        RisingTerms(history=2, min_history=3)


def test_trend_documents():
    enricher = RisingTerms()
    out = enricher.combine([enricher.extract(table(_records()))], NOW)
    docs = list(enricher.documents("trends", out["trends"], NOW))
    assert len(docs) == out["trends"].num_rows and list(enricher.documents("windows", out["windows"], NOW)) == []
    doc = next(d for d in docs if d["trends"]["term"] == "انتخابات")
    assert doc["kind"] == "trend" and doc["created_at"] == "2026-03-11T00:00:00Z"
    assert doc["trends"]["window_hours"] == 24 and len(doc["key"].encode()) < 100


def _cells_of(part) -> tuple[dict[int, tuple], dict[str, set]]:
    """The part's count rows by cell, and each record row's (term_kind, term, window_start, count) cells."""
    rows = part.to_pylist()
    cells = {r["cell"]: (r["term_kind"], r["term"], r["window_start"], r["count"]) for r in rows if r["term_kind"] != "record"}
    records = {r["key"]: {cells[c][:3] for c in r["cells"]} for r in rows if r["term_kind"] == "record"}
    return cells, records


def test_a_part_holds_counts_per_term_and_window_and_the_cells_of_each_record():
    rows = [record("x:1", "price rises", at=_day(0, 1), hashtags=["a"]),
            record("x:2", "price falls falls", at=_day(0, 2), hashtags=["a", "a"]),
            record("x:3", "price", at=_day(1, 0)),
            record("x:1", "quiet", at=_day(0, 3)),  # x:1 again in the same part: its last row is its observation
            {**record("x:4", "price"), "created_at": None}]  # no time: in no window
    enricher = RisingTerms()
    assert enricher.stamp.startswith("trends/3+"), "the part format changed: a new declared version re-derives"
    part = enricher.extract(table(rows))
    assert set(part.column("enricher_version").to_pylist()) == {enricher.stamp}
    cells, records = _cells_of(part)
    day0, day1 = T0, T0 + timedelta(days=1)
    assert sorted(cells.values(), key=str) == sorted([
        ("hashtag", "a", day0, 1), ("term", "price", day0, 1), ("term", "falls", day0, 1), ("term", "quiet", day0, 1),
        ("term", "price", day1, 1)], key=str), "each record once per term; x:1's first row no longer counts"
    assert records == {"x:1": {("term", "quiet", day0)}, "x:2": {("hashtag", "a", day0), ("term", "price", day0),
                                                                  ("term", "falls", day0)},
                       "x:3": {("term", "price", day1)}, "x:4": set()}
    assert part.filter(pc.equal(part.column("term_kind"), "record")).column("tenant").to_pylist() == ["acme"] * 4


def test_terms_of_persian_and_latin_text():
    text = ("Price\tRISE\nhttp://x.com/a?b=c #tag @user می‌خواهم قیمت،دلار ۱۲۳۴ abc_def user@mail.com "
            "x.#other (@handle gone")
    part = RisingTerms().extract(table([record("x:1", text, hashtags=["قطعی_برق"])]))
    cells, _ = _cells_of(part)
    assert {(kind, term) for kind, term, _, _ in cells.values()} == {
        ("hashtag", "قطعی_برق"), ("term", "price"), ("term", "rise"), ("term", "می\u200cخواهم"), ("term", "قیمت"),
        ("term", "دلار"), ("term", "abc_def"), ("term", "user"), ("term", "gone")}, \
        "links, @handles, #tags and digits are no terms; ZWNJ stays inside a word; Persian commas split"


def test_counting_cells_by_sorting_and_by_counting_agree():
    rng = np.random.default_rng(3)
    for space in (50, 1 << 24):  # counted (a small code space), sorted (a large one)
        codes = rng.integers(0, space, 5000)
        got = _cells(codes, space)
        want = np.unique(codes, return_inverse=True, return_counts=True)
        assert all(np.array_equal(np.ravel(g), np.ravel(w)) for g, w in zip(got, want))


def test_parts_sum_and_a_record_observed_again_moves_its_terms():
    enricher = RisingTerms(min_history=1, history=1, min_count=1)
    first = [record(f"x:{i}", "alpha beta", at=_day(0, i)) for i in range(4)]
    again = [record("x:0", "gamma", at=_day(0, 0)), record("x:9", "alpha", at=_day(0, 9))]  # x:0 edited, x:9 new
    out = enricher.combine([enricher.extract(table(first)), enricher.extract(table(again))], NOW)
    counts = {r["term"]: r["count"] for r in out["windows"].to_pylist()}
    assert counts == {"alpha": 4, "beta": 3, "gamma": 1}


def test_with_lemmas_the_forms_of_a_word_count_together():
    zwnj = "\u200c"
    rows, n = [], 0
    for day in range(12):
        for i in range(6):
            text = "weather report for the city today"
            if day == 11:  # three forms of one word, two records each: none reaches min_count alone
                text = ["کتاب" + zwnj + "ها رسید", "کتابهای تازه", "کتابم گم شد"][i % 3]
            rows.append(record(f"x:{n}", text, at=_day(day, i), hashtags=[]))
            n += 1
    for lemmas, expect in ((False, None), (True, 6)):
        enricher = RisingTerms(lemmas=lemmas)
        out = enricher.combine([enricher.extract(table(rows))], NOW)
        found = {r["term"]: r["count"] for r in out["trends"].to_pylist() if r["term_kind"] == "term"}
        assert found.get("کتاب") == expect, found
