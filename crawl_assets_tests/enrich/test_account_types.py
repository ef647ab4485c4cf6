"""Account type and automation signals on planted accounts: a scheduler, an amplifier, a conversational person;
each signal with the value that fired it, the client the platform names, the age a Snowflake id tells."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone


from crawl_assets.enrich.account_types import AccountTypes, account_created_at, client_of, fired
from crawl_assets.enrich.base import CombineContext
from crawl_assets_tests.enrich.records import T0, record, table

NOW = CombineContext("acme", datetime(2026, 4, 1, tzinfo=timezone.utc))
SNOWFLAKE = str(((int((T0 - timedelta(days=10)).timestamp() * 1000) - 1288834974657) << 22) + 7)


def _accounts(rows: list[dict], **params) -> dict[str, dict]:
    enricher = AccountTypes(**params)
    out = enricher.combine([enricher.extract(table(rows))], NOW)["accounts"]
    return {r["author_id"]: r for r in out.to_pylist()}


def _planted() -> list[dict]:
    rnd = random.Random(3)
    rows = []
    scheduler = '<a href="https://ifttt.com" rel="nofollow">IFTTT</a>'
    for i in range(60):  # every 15 minutes round the clock, the same few texts, through an automation client
        rows.append(record(f"x:s{i}", f"daily rate update {i % 3}", author=SNOWFLAKE, at=T0 + timedelta(minutes=15 * i),
                           metadata={"source": scheduler}))
    for i in range(30):  # reposts in bursts
        rows.append(record(f"x:a{i}", f"RT something {i}", author="amp", kind="repost",
                           at=T0 + timedelta(hours=3 * (i // 10), seconds=20 * (i % 10))))
    for i in range(20):  # replies at human hours, irregular
        rows.append(record(f"x:h{i}", f"my own answer number {i} {rnd.random()}", author="human",
                           at=T0 + timedelta(days=i // 3, hours=9 + rnd.randint(0, 12), minutes=rnd.randint(0, 59)),
                           reply_to="x:s1" if i % 2 == 0 else None,
                           metadata={"source": "Twitter for Android"}))
    rows += [record(f"x:f{i}", "hello", author="few", at=T0 + timedelta(hours=i)) for i in range(3)]
    return rows


def test_planted_accounts_get_the_signals_that_describe_them():
    got = _accounts(_planted())
    bot, amp, human, few = got[SNOWFLAKE], got["amp"], got["human"], got["few"]
    signals = {a: {d["signal"] for d in got[a]["drivers"]} for a in got}
    assert {"regular_gaps", "clockwork_intervals", "automation_client", "repeated_texts", "new_account"} <= signals[SNOWFLAKE]
    assert bot["client"] == "IFTTT" and bot["features"]["client_share"] == 1.0
    assert abs((bot["account_created_at"] - (T0 - timedelta(days=10))).total_seconds()) < 1
    assert 9.9 < bot["features"]["account_age_days"] < 10.1
    assert {"mostly_reposts", "bursty", "fast_posting"} <= signals["amp"] and "amplifier" in amp["type_signals"]
    assert amp["features"]["burstiness"] > 0.5
    assert signals["human"] == set() and human["score"] == 0.0 and "conversational" in human["type_signals"]
    assert human["client"] == "Twitter for Android" and human["features"]["account_age_days"] is None
    assert bot["score"] > amp["score"] > human["score"]
    assert few["score"] is None and few["drivers"] == [], "too few posts: features only, no score"
    weights = [d["weight"] for d in bot["drivers"]]
    assert weights == sorted(weights, reverse=True) and bot["score"] == min(1.0, round(sum(weights), 4))
    assert all(r["inferred"] and r["enricher_version"].startswith("account_types/1+") for r in got.values())


def test_client_and_age_read_only_what_the_platform_says():
    assert client_of('{"via_bot": "newsbot"}') == "via bot newsbot"
    assert client_of('{"source": "<a href=\\"x\\">Buffer</a>"}') == "Buffer" and client_of('{"lang": "fa"}') is None
    assert client_of("not json {\"source\"") is None
    assert account_created_at("x", SNOWFLAKE, frozenset({"x"})) is not None
    assert account_created_at("telegram", SNOWFLAKE, frozenset({"x"})) is None, "only Snowflake platforms"
    assert account_created_at("x", "12345", frozenset({"x"})) is None, "pre-Snowflake ids tell nothing"
    assert fired({"gap_cv": None, "repost_share": float("nan")}) == [], "unknown features fire nothing"
