"""Features in their own index on the real node, joined to records by key: a record's features, the records
of a near-duplicate cluster, the trend windows of a hashtag and their records, an account's features, the
redacted view. Sent once; changes sent as changes; another tenant sees nothing."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from crawl_assets.enrich import search
from crawl_assets.enrich.config import ENRICHERS
from crawl_assets.enrich.index import index_features
from crawl_assets.enrich.run import enrich_source
from crawl_assets.query.profiles import author_profile
from crawl_assets.index.sink import index_documents
from crawl_assets.lake import Lake
from crawl_assets_tests.enrich.records import T0, batch_id, record, write_part
from crawl_assets_tests.es_node.inspect import all_docs
from crawl_assets_tests.index.conftest import EsTarget

NOW = datetime(2026, 4, 1, tzinfo=timezone.utc)
SLOGAN = "everyone must join the protest at the central square tomorrow at noon"


def _rows(tenant: str) -> list[dict]:
    src = f"{tenant}.x.main"
    rows = [record("x:pii", "call me on ۰۹۱۲۳۴۵۶۷۸۹ or mail sara@example.com", tenant=tenant, source=src,
                   author="sara")]
    rows += [record(f"x:dup{i}", SLOGAN + ("!" * i), tenant=tenant, source=src, author=f"acct{i}",
                    at=T0 + timedelta(days=9, hours=i)) for i in range(3)]
    for day in range(10):
        n = 12 if day == 9 else (1 if day % 3 == 0 else 0)
        rows += [record(f"x:t{day}_{i}", f"news of the day number {i}", tenant=tenant, source=src, author="news",
                        at=T0 + timedelta(days=day, minutes=i), hashtags=["قطعی_برق"]) for i in range(n)]
    return rows


def _enrich_and_index(es: EsTarget, lake: Lake) -> dict:
    results = {}
    for name, cls in ENRICHERS.items():
        enricher = cls()
        enrich_source(lake, enricher, es.tenant, "x", f"{es.tenant}.x.main", now=NOW)
        results[name] = index_features(es.client, lake, enricher, es.tenant, "x", f"{es.tenant}.x.main")
    return results


def test_features_join_records_and_are_sent_once(es: EsTarget, tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    rows = _rows(es.tenant)
    write_part(lake, rows, batch_id(1), tenant=es.tenant, source=f"{es.tenant}.x.main")
    index_documents(es.client, rows, family="records", tenant=es.tenant, deadletter_root=str(tmp_path / "lake"))
    first = _enrich_and_index(es, lake)
    assert all(r.accounted for r in first.values())

    pii = search.record_features(es.client, es.tenant, "x:pii")
    assert pii["personal_data"]["personal_data"]["types"] == ["email", "phone"]
    assert pii["personal_data"]["inferred"] is True and pii["classifier"]["classifier"]["task"] == "sentiment"
    assert "sara@example.com" not in str(pii["personal_data"]), "spans, never the values"
    [view] = search.redacted_view(es.client, es.tenant, ["x:pii"])
    assert view["text_clean"] == "call me on [phone] or mail [email]" and "text" not in view

    [cluster] = search.largest_clusters(es.client, es.tenant)
    assert cluster["near_duplicates"]["member_count"] == 3 and cluster["near_duplicates"]["account_count"] == 3
    members = search.cluster_records(es.client, es.tenant, cluster["near_duplicates"]["cluster_id"])
    assert [m["key"] for m in members] == ["x:dup0", "x:dup1", "x:dup2"] and members[0]["text"].startswith("everyone")

    [window] = search.trend_windows(es.client, es.tenant, "#قطعی_برق")
    assert window["count"] == 12 and window["window_start"] == "2026-03-10T00:00:00Z"
    assert window["baseline_counts"] == [0, 1, 0, 0, 1, 0, 0] and "12 records" in window["explanation"]
    assert len(search.trend_records(es.client, es.tenant, window)) == 12
    assert search.top_trends(es.client, es.tenant)[0]["score"] >= window["score"]

    news = search.account_activity(es.client, es.tenant, "x", "news")
    assert news["account_activity"]["posts"] == 15 and news["inferred"] is True
    es.client.indices.refresh(index="crawl-*")
    profile = author_profile(es.client, es.tenant, "news")  # /v1/authors/news: the account's features joined
    assert profile["records"] == 15 and profile["inferred"]["source"] == "enrichment (model-made, not observed)"
    activity = profile["inferred"]["features"]["account_activity"]
    assert activity["posts"] == 15 and activity["active_days"] == news["account_activity"]["active_days"]
    assert profile["inferred"]["stamps"]["account_activity"] == news["enricher_version"]
    assert author_profile(es.client, f"{es.tenant}b", "news") is None, "another tenant sees nothing"

    again = _enrich_and_index(es, lake)
    assert all(r.stats.docs == 0 and r.deleted == 0 for r in again.values()), "nothing is sent twice"
    other = f"{es.tenant}b"
    assert search.record_features(es.client, other, "x:pii") == {}
    assert search.trend_windows(es.client, other, "قطعی_برق") == []


def test_changes_are_sent_as_changes(es: EsTarget, tmp_path):
    lake = Lake(str(tmp_path / "lake"))
    src = f"{es.tenant}.x.main"
    write_part(lake, _rows(es.tenant), batch_id(1), tenant=es.tenant, source=src)
    _enrich_and_index(es, lake)
    features = f"crawl-features-{es.tenant}"
    # a later observation: the phone number edited out, one slogan copy edited into something else
    write_part(lake, [record("x:pii", "call me later", tenant=es.tenant, source=src, author="sara",
                             at=T0, edited_at="2026-03-02T00:00:00Z"),
                      record("x:dup2", "a completely different message about the weather and the sea",
                             tenant=es.tenant, source=src, author="acct2", at=T0 + timedelta(days=9, hours=2))],
               batch_id(2), tenant=es.tenant, source=src)
    second = _enrich_and_index(es, lake)
    docs = all_docs(es.client, features)
    assert "personal_data:x:pii" not in docs and second["personal_data"].deleted == 1
    assert "near_duplicates:x:dup2" not in docs and second["near_duplicates"].deleted == 1
    [cluster] = [d.source for d in docs.values() if d.source["kind"] == "cluster"
                 and d.source["near_duplicates"]["first_key"] == "x:dup0"]
    assert cluster["near_duplicates"]["member_count"] == 2
    assert second["near_duplicates"].stats.docs == 1, "only the changed cluster document is sent"
    assert second["trends"].stats.docs == 0, "no trend changed"


def test_features_of_a_part_that_is_gone_leave_the_index(es: EsTarget, tmp_path):
    """A normalized part removed (retention, or an erasure's rewrite): its feature part goes at the next run,
    and so do its documents, unless another part of the source still holds the record."""
    lake = Lake(str(tmp_path / "lake"))
    src = f"{es.tenant}.x.main"
    write_part(lake, [record("x:a", "mail a@example.com", tenant=es.tenant, source=src),
                      record("x:b", "mail b@example.com", tenant=es.tenant, source=src)], batch_id(1),
               tenant=es.tenant, source=src)
    write_part(lake, [record("x:b", "mail b@example.com again", tenant=es.tenant, source=src,
                             edited_at="2026-03-02T00:00:00Z")], batch_id(2), tenant=es.tenant, source=src)
    pii = ENRICHERS["personal_data"]()
    enrich_source(lake, pii, es.tenant, "x", src)
    index_features(es.client, lake, pii, es.tenant, "x", src)
    features = f"crawl-features-{es.tenant}"
    assert {"personal_data:x:a", "personal_data:x:b"} <= set(all_docs(es.client, features))
    lake.fs.rm(lake.path(lake.table_part("normalized_records", es.tenant, "x", src, batch_id(1))))
    result = enrich_source(lake, pii, es.tenant, "x", src)
    assert result.parts_removed == 1 and result.removed_keys == {"x:a", "x:b"}
    indexed = index_features(es.client, lake, pii, es.tenant, "x", src, removed_keys=result.removed_keys)
    docs = all_docs(es.client, features)
    assert "personal_data:x:a" not in docs and "personal_data:x:b" in docs and indexed.deleted == 1
