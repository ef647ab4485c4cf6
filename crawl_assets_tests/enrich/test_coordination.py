"""Coordination signals on planted coordinated groups beside organic look-alikes (a viral link, a shared
hashtag over hours, prolific accounts meeting by chance)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

from crawl_assets.enrich.base import CombineContext
from crawl_assets.enrich.coordination import Coordination, co_shares, normalize_url
from crawl_assets_tests.enrich.records import T0, record, table

WORDS = ("river mountain bread window silver garden engine letter market winter candle bridge pocket "
         "ladder violin desert harbor rocket pepper meadow orbit canvas lantern marble fossil tunnel falcon "
         "copper velvet island thunder walnut glacier").split()
NOW = CombineContext("acme", datetime(2026, 4, 1, tzinfo=timezone.utc))


def _planted(seed: int = 7) -> tuple[list[dict], list[set[str]]]:
    rnd = random.Random(seed)
    rows: list[dict] = []
    groups: list[set[str]] = []
    n = 0

    def post(author: str, at: datetime, **extra) -> None:
        nonlocal n
        n += 1
        rows.append(record(f"x:{n}", extra.pop("text", f"post {n} by {author} about things {rnd.random()}"),
                           author=author, at=at, **extra))

    # five coordinated groups of 3 to 6 accounts: each pushes 6 items (a URL, a hashtag or the same text),
    # every member within 40 s of the first, on different days
    for g in range(5):
        members = {f"g{g}m{i}" for i in range(3 + g % 4)}
        groups.append(members)
        for item in range(6):
            start = T0 + timedelta(days=item, hours=g * 3 + rnd.randint(0, 2), minutes=rnd.randint(0, 50))
            message = " ".join(rnd.sample(WORDS, 12))  # one text per item, unlike any other
            for m in sorted(members):
                at = start + timedelta(seconds=rnd.randint(0, 40))
                if item % 3 == 0:
                    post(m, at, urls=[f"https://www.campaign{g}.example/story/{item}?utm_source={m}"])
                elif item % 3 == 1:
                    post(m, at, hashtags=[f"push{g}_{item}"])
                else:
                    post(m, at, text=message)
    # organic: 200 people sharing one viral link within minutes (a crowd, not pairs)
    for i in range(200):
        post(f"crowd{i}", T0 + timedelta(days=2, seconds=rnd.randint(0, 300)), urls=["https://news.example/viral"])
    # organic: 40 people using a popular hashtag over hours, each a few times
    for i in range(40):
        for k in range(3):
            post(f"tag{i}", T0 + timedelta(days=k, minutes=rnd.randint(0, 600)), hashtags=["ورزش"])
    # organic: two prolific news accounts posting 300 links each; they meet on a handful by chance
    for who in ("newsA", "newsB"):
        for k in range(300):
            post(who, T0 + timedelta(minutes=20 * k + rnd.randint(0, 5)),
                 urls=[f"https://wire.example/{k if k % 60 == 0 else who + str(k)}"])
    return rows, groups


def _run(rows: list[dict], parts: int = 3, **params) -> dict:
    enricher = Coordination(**params)
    size = -(-len(rows) // parts)
    extracted = [enricher.extract(table(rows[i:i + size])) for i in range(0, len(rows), size)]
    return enricher.combine(extracted, NOW)


def test_planted_groups_are_recovered_and_look_alikes_are_not():
    rows, planted = _planted()
    out = _run(rows)
    found = [set(g["accounts"]) for g in out["groups"].to_pylist()]
    flagged = set().union(*found) if found else set()
    truth = set().union(*planted)
    precision = len(flagged & truth) / max(len(flagged), 1)
    recall = len(flagged & truth) / len(truth)
    assert precision >= 0.9 and recall >= 0.9, (precision, recall, found)
    exact = sum(1 for g in planted if g in found)
    assert exact / len(planted) >= 0.9, found
    assert not flagged & {"newsA", "newsB"} and not any(a.startswith(("crowd", "tag")) for a in flagged)


def test_group_rows_name_accounts_by_platform_ids_with_the_caution():
    rows, planted = _planted()
    out = _run(rows)
    group = next(g for g in out["groups"].to_pylist() if set(g["accounts"]) == planted[0])
    assert group["account_keys"] == sorted(f"x:{a}" for a in planted[0]) and group["platforms"] == ["x"]
    assert group["items"] == 6 and set(group["kinds"]) == {"url", "hashtag", "text"}
    assert "https://campaign0.example/story/0" in {i.removeprefix("url:") for i in group["top_items"]}
    assert "not proof of coordination" in group["caution"] and group["window_seconds"] == 60
    edges = [e for e in out["edges"].to_pylist() if e["group_id"] == group["group_id"]]
    n = len(planted[0])
    assert len(edges) == n * (n - 1) // 2 and all(e["weight"] == 6 and e["source"] < e["target"] for e in edges)
    assert all(r["inferred"] and r["enricher_version"].startswith("coordination/1+") for r in out["groups"].to_pylist())


def test_window_and_repetitions_are_parameters():
    rows, _ = _planted()
    assert _run(rows, window_seconds=5)["groups"].num_rows < 5, "a tighter window than the planted spread splits"
    assert _run(rows, min_repetitions=7)["groups"].num_rows == 0, "six shared items never reach seven"
    assert Coordination(window_seconds=30).stamp != Coordination().stamp
    with pytest.raises(ValueError, match="window_seconds"):
        Coordination(window_seconds=0)


def test_co_shares_and_urls():
    import numpy as np

    item = np.array([0, 0, 0, 1, 1])
    t = np.array([0, 10, 100, 0, 5])
    account = np.array([1, 2, 3, 1, 1])
    pairs = co_shares(item, t, account, window=60, max_burst=10)
    assert list(zip(pairs["a"], pairs["b"], pairs["item"])) == [(1, 2, 0)], "same account or too far: no pair"
    assert normalize_url("HTTPS://WWW.Example.com/a/?utm_source=x&b=2&a=1#top") == "https://example.com/a?a=1&b=2"
    assert normalize_url("javascript:alert(1)") is None


def test_group_and_edge_rows_carry_each_accounts_latest_handle():
    """A handle is read for the linked accounts only, from the last of their records that names one (a later
    record without a handle, or with an empty one, keeps it)."""
    rows, groups = _planted()
    members = sorted(groups[0])
    for r in rows:
        if r["author_id"] in members:
            r["author_handle"] = f"old_{r['author_id']}"
    for m in members:  # each member's last record: a new handle, then (on its very last) none or an empty one
        mine = [i for i, r in enumerate(rows) if r["author_id"] == m]
        rows[mine[-2]]["author_handle"] = f"new_{m}"
        rows[mine[-1]]["author_handle"] = "" if m.endswith("0") else None
    out = _run(rows)
    group = next(g for g in out["groups"].to_pylist() if set(g["accounts"]) == groups[0])
    assert group["handles"] == [f"new_{m}" for m in members]
    edge = next(e for e in out["edges"].to_pylist() if e["source"] == f"x:{members[0]}")
    assert edge["source_handle"] == f"new_{members[0]}" and edge["target_handle"] == f"new_{edge['target'][2:]}"
    assert all(h is None for g in out["groups"].to_pylist() if set(g["accounts"]) != groups[0] for h in g["handles"])
