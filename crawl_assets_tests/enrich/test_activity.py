"""Account activity features on planted accounts with known answers."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from crawl_assets.enrich.activity import AccountActivity
from crawl_assets.enrich.base import CombineContext
from crawl_assets_tests.enrich.records import T0, record, table

NOW = CombineContext("acme", datetime(2026, 4, 1, tzinfo=timezone.utc))


def _accounts(rows, **params) -> dict[str, dict]:
    enricher = AccountActivity(**params)
    out = enricher.combine([enricher.extract(table(rows))], NOW)["accounts"]
    return {r["author_id"]: r for r in out.to_pylist()}


def test_a_clockwork_account_and_a_human_one():
    rows = []
    # "clock": 48 posts exactly 30 s apart at 03:00 UTC, every third a repost, the same text each time
    for i in range(48):
        kind = "repost" if i % 3 == 0 else "post"
        rows.append(record(f"x:c{i}", "buy now limited offer", author="clock", kind=kind,
                           at=T0 + timedelta(hours=3, seconds=30 * i), lang="en"))
    # "person": 4 posts over 3 days at different hours, one reply, two languages, one text also posted by clock
    for i, (hours, lang) in enumerate(((9, "fa"), (20, "fa"), (36, "en"), (70, "fa"))):
        extra = {"reply_to": "x:c1"} if i == 1 else {}
        text = "buy now limited offer" if i == 3 else f"my own thoughts number {i}"
        rows.append(record(f"x:p{i}", text, author="person", at=T0 + timedelta(hours=hours), lang=lang, **extra))
    rows.append(record("x:anon", "no author", author=None))
    got = _accounts(rows)
    assert set(got) == {"clock", "person"}, "records without an author id make no account"
    clock, person = got["clock"], got["person"]
    assert clock["posts"] == 48 and clock["active_days"] == 1 and clock["posts_per_day"] == 48.0
    assert clock["gap_median_s"] == 30.0 and clock["gap_cv"] == 0.0 and clock["gap_under_60s_share"] == 1.0
    assert clock["hour_profile"][3] == 1.0 and clock["hour_entropy"] == 0.0
    assert clock["repost_share"] == 0.3333
    assert clock["duplicate_text_ratio"] == 1.0 and clock["self_duplicate_ratio"] == 1.0
    assert person["posts"] == 4 and person["active_days"] == 3 and person["reply_share"] == 0.25
    assert person["posts_per_day"] == round(4 / (61 / 24), 4)
    assert person["duplicate_text_ratio"] == 0.25 and person["self_duplicate_ratio"] == 0.0
    assert person["languages"] == [{"lang": "fa", "posts": 3}, {"lang": "en", "posts": 1}]
    assert person["hour_entropy"] == 2.0  # four posts in four different hours
    assert person["gap_cv"] is not None and person["gap_cv"] > 0.3
    assert all(r["inferred"] and r["enricher"] == "account_activity" for r in got.values())


def test_few_posts_give_no_regularity_and_min_posts_filters():
    rows = [record("x:1", "hello there", author="a"), record("x:2", "hello again", author="a",
                                                                at=T0 + timedelta(minutes=5))]
    only = _accounts(rows)["a"]
    assert only["gap_cv"] is None and only["gap_median_s"] is None
    assert _accounts(rows, min_posts=3) == {}


def test_latest_observation_of_a_record_counts_once():
    enricher = AccountActivity()
    first = enricher.extract(table([record("x:1", "first text", author="a")]))
    again = enricher.extract(table([record("x:1", "first text edited", author="a")]))
    out = enricher.combine([first, again], NOW)["accounts"].to_pylist()
    assert [r["posts"] for r in out] == [1]


def test_documents_are_per_account_and_inferred():
    enricher = AccountActivity()
    rows = [record("x:1", "hello", author="a", lang=None), record("telegram:2", "salam", platform="telegram", author="a")]
    out = enricher.combine([enricher.extract(table(rows))], NOW)["accounts"]
    docs = {d["key"]: d for d in enricher.documents("accounts", out, NOW)}
    assert set(docs) == {"account_activity:x:a", "account_activity:telegram:a"}, "author ids are per platform"
    doc = docs["account_activity:x:a"]
    assert doc["kind"] == "account" and doc["inferred"] is True
    assert doc["account_activity"]["languages"] == {"und": 1}
