"""Earlier versions of an edited X post (``metadata.superseded_by``) are history, not posts: the queries
leave them out unless asked (``include_superseded``), so a post edited twice counts once."""

from __future__ import annotations

from pathlib import Path

from crawl_assets.query.clauses import author_posts, hashtag_counts, search_text
from crawl_assets_tests.index.conftest import EsTarget
from crawl_assets_tests.index.docs import record
from crawl_assets_tests.index.test_es_queries import index, keys

CHAIN = ["5001", "5002", "5003"]


def test_superseded_versions_count_once(es: EsTarget, tmp_path: Path) -> None:
    versions = [record(i, es.tenant, key=f"x:{tid}", native_id=tid, author_id="42", created_at=f"2026-01-10T0{i}:00:00Z",
                       text=f"news from tehran, take {i}", hashtags=["tehran", "news"],
                       metadata={"edit_history_tweet_ids": CHAIN,
                                 **({"superseded_by": "x:5003"} if tid != CHAIN[-1] else {})})
                for i, tid in enumerate(CHAIN)]
    index(es, versions, tmp_path)
    assert hashtag_counts(es.client, es.tenant) == [("news", 1), ("tehran", 1)]
    assert keys(search_text(es.client, es.tenant, "tehran")) == ["x:5003"]
    assert keys(search_text(es.client, es.tenant, "tehran", include_superseded=True)) == [f"x:{t}" for t in CHAIN]
    [post] = author_posts(es.client, es.tenant, "42")  # the chain folds its history in, superseded versions too
    assert post["key"] == "x:5003" and [h["key"] for h in post["history"]] == ["x:5001", "x:5002"]
