"""The queries the project promises, on the real node, through ``crawl_assets.query.clauses``."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawl_assets.query.clauses import author_posts, hashtag_counts, search_text, thread
from crawl_assets.index.sink import index_documents
from crawl_assets_tests.index.conftest import EsTarget
from crawl_assets_tests.index.docs import record

ZWNJ = "\u200c"


def index(es: EsTarget, docs: list[dict], tmp_path: Path, tenant: str | None = None) -> None:
    stats = index_documents(es.client, docs, family="records", tenant=tenant or es.tenant,
                            deadletter_root=str(tmp_path / "lake"))
    assert stats.failed == 0 and stats.unaccounted == 0


def keys(docs: list[dict]) -> list[str]:
    return sorted(d["key"] for d in docs)


@pytest.fixture
def persian(es: EsTarget, tmp_path: Path) -> EsTarget:
    texts = {
        1: f"دانش{ZWNJ}آموزی تازه در کلاس",          # ZWNJ, Persian keheh and yeh
        2: "دانشآموزي تازه در كلاس",                  # no ZWNJ, Arabic kaf and yeh
        3: "دانش آموزی تازه در کلاس",                 # a space instead
        4: "سال ۱۴۰۲ خبر تازه",                       # Persian digits
        5: "hello world",
        6: f"دانش{ZWNJ}آموزی تازه در کلاس پاک شد",   # a tombstone
    }
    docs = [record(i, es.tenant, text=t, lang="en" if i == 5 else "fa") for i, t in texts.items()]
    docs[-1].update(deleted=True, deleted_at="2026-02-01T00:00:00Z")
    index(es, docs, tmp_path)
    return es


@pytest.mark.parametrize("query", [f"دانش{ZWNJ}آموزی", "دانشآموزی", "دانشآموزي"])
def test_a_word_is_found_with_zwnj_or_without_in_either_letter_form(persian: EsTarget, query: str) -> None:
    found = keys(search_text(persian.client, persian.tenant, query))
    assert {"x:1001", "x:1002"} <= set(found), found
    assert "x:1006" not in found, "tombstones are not search results"
    if ZWNJ in query:
        assert "x:1003" in found, "a ZWNJ query also finds the spaced spelling"


def test_letter_forms_digits_language_and_dates(persian: EsTarget) -> None:
    es = persian
    assert keys(search_text(es.client, es.tenant, "كلاس")) == keys(search_text(es.client, es.tenant, "کلاس")) == [
        "x:1001", "x:1002", "x:1003"]
    assert keys(search_text(es.client, es.tenant, "1402")) == ["x:1004"]
    assert keys(search_text(es.client, es.tenant, "١٤٠٢ خبر")) == ["x:1004"]
    assert keys(search_text(es.client, es.tenant, "hello", lang="en")) == ["x:1005"]
    assert search_text(es.client, es.tenant, "hello", lang="fa") == []
    assert search_text(es.client, es.tenant, "hello", start="2026-02-01T00:00:00Z") == []
    assert keys(search_text(es.client, es.tenant, "پاک", include_deleted=True)) == ["x:1006"]


def test_a_word_finds_its_forms_through_the_lemma_field_exact_forms_first(es: EsTarget, tmp_path: Path) -> None:
    texts = {1: "کتابهایمان رسید", 2: "این کتاب تازه است", 3: "می‌خوانم و می‌نویسم", 4: "باران آمد",
             5: "بار سنگین بود"}
    index(es, [record(i, es.tenant, text=t, lang="fa") for i, t in texts.items()], tmp_path)
    found = keys(search_text(es.client, es.tenant, "کتاب"))
    assert found == ["x:1001", "x:1002"], "a plural with its possessive is a form of the word"
    assert search_text(es.client, es.tenant, "کتاب")[0]["key"] == "x:1002", "the exact word scores first"
    assert keys(search_text(es.client, es.tenant, "خواندن")) == ["x:1003"], "a verb's infinitive finds its forms"
    assert keys(search_text(es.client, es.tenant, "کتابها")) == ["x:1001", "x:1002"]
    assert keys(search_text(es.client, es.tenant, "بار")) == ["x:1005"], "a look-alike is not a form"


def test_hashtag_counts_over_a_date_range_across_monthly_indices(es: EsTarget, tmp_path: Path) -> None:
    docs = [record(i, es.tenant, month=m, hashtags=tags) for i, (m, tags) in enumerate([
        (1, ["اقتصاد"]), (1, ["اقتصاد", "تهران"]), (2, ["اقتصاد"]), (2, ["ورزش"]), (3, ["ورزش"]), (3, ["ورزش"]),
    ])]
    docs.append(record(9, es.tenant, month=2, hashtags=["اقتصاد"], deleted=True, deleted_at="2026-03-01T00:00:00Z"))
    index(es, docs, tmp_path)
    # most used first; ties by key (Elasticsearch's terms order); the tombstone does not count
    assert hashtag_counts(es.client, es.tenant) == [("اقتصاد", 3), ("ورزش", 3), ("تهران", 1)]
    assert hashtag_counts(es.client, es.tenant, "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z") == [
        ("اقتصاد", 3), ("تهران", 1), ("ورزش", 1)]
    assert hashtag_counts(es.client, es.tenant, "2026-03-01", "2026-04-01") == [("ورزش", 2)]
    assert hashtag_counts(es.client, "nobody-here") == []


def test_one_conversation_thread_in_order(es: EsTarget, tmp_path: Path) -> None:
    root = record(1, es.tenant, created_at="2026-01-05T10:00:00Z", conversation_id="x:1001")
    replies = [record(i, es.tenant, created_at=f"2026-01-0{i}T12:00:00Z", conversation_id="x:1001",
                      reply_to="x:1001") for i in (7, 6, 9)]
    other = record(2, es.tenant, created_at="2026-01-05T11:00:00Z", conversation_id="x:1002")
    late = record(8, es.tenant, created_at="2026-02-02T00:00:00Z", conversation_id="x:1001")  # next month's index
    index(es, [root, *replies, other, late], tmp_path)
    assert [d["key"] for d in thread(es.client, es.tenant, "x:1001")] == [
        "x:1001", "x:1006", "x:1007", "x:1009", "x:1008"]


def test_an_authors_posts_with_edit_history(es: EsTarget, tmp_path: Path) -> None:
    chain = ["5001", "5002", "5003"]  # an X post edited twice: three ids, one chain
    versions = [record(i, es.tenant, key=f"x:{tid}", native_id=tid, author_id="42", author_handle="Sara_K",
                       created_at=f"2026-01-10T0{i}:00:00Z", text=f"نسخه {i}",
                       metadata={"edit_history_tweet_ids": chain[:i + 1]}) for i, tid in enumerate(chain)]
    edited = record(7, es.tenant, author_id="42", author_handle="Sara_K", created_at="2026-01-12T00:00:00Z",
                    edited_at="2026-01-13T00:00:00Z", text="ویرایش شده")
    other = record(8, es.tenant, author_id="43", author_handle="someone")
    index(es, [*versions, edited, other], tmp_path)
    for who in ("42", "Sara_K", "@sara_k"):
        posts = author_posts(es.client, es.tenant, who)
        assert [p["key"] for p in posts] == ["x:1007", "x:5003"], who
        assert posts[0]["edited_at"] == "2026-01-13T00:00:00Z" and posts[0]["history"] == []
        assert [h["key"] for h in posts[1]["history"]] == ["x:5001", "x:5002"]
        assert posts[1]["text"] == "نسخه 2"


def test_records_of_one_tenant_never_come_back_through_another(es: EsTarget, tmp_path: Path) -> None:
    other = es.tenant + "-b"
    index(es, [record(1, es.tenant, text="راز شرکت الف", hashtags=["الف"], author_id="1")], tmp_path)
    index(es, [record(2, other, text="چیز دیگر", hashtags=["ب"], author_id="1")], tmp_path, tenant=other)
    try:
        assert search_text(es.client, other, "راز") == []
        assert keys(search_text(es.client, es.tenant, "راز")) == ["x:1001"]
        assert hashtag_counts(es.client, other) == [("ب", 1)]
        assert [p["key"] for p in author_posts(es.client, other, "1")] == ["x:1002"]
        assert thread(es.client, other, "x:1001") == []
    finally:
        for name in es.client.indices.get_alias(index=f"crawl-records-{other}-*"):
            es.client.indices.delete(index=name)


def test_a_key_held_by_two_monthly_indices_reads_as_its_later_document(es: EsTarget, tmp_path: Path) -> None:
    """A record whose ``created_at`` moved to another month is in two indices of the alias; lookups by key
    (a record, its versions, a thread's parents) keep the later one, in any order Elasticsearch answers."""
    from crawl_assets.query.conversations import fetch_keys, record_with_history
    from crawl_assets.index.naming import read_alias

    for month, text in ((2, "نسخه دوم"), (1, "نسخه اول")):  # the later one indexed first
        index(es, [record(1, es.tenant, month=month, text=text), record(2, es.tenant, month=month)], tmp_path)
    es.client.indices.refresh(index=read_alias("records", es.tenant))
    assert es.client.count(index=read_alias("records", es.tenant), query={"term": {"key": "x:1001"}})["count"] == 2
    found = fetch_keys(es.client, es.tenant, ["x:1001", "x:1002", "x:9999"])
    assert sorted(found) == ["x:1001", "x:1002"]
    assert found["x:1001"]["text"] == "نسخه دوم" and found["x:1001"]["created_at"].startswith("2026-02")
    assert record_with_history(es.client, es.tenant, "x:1001")["record"]["text"] == "نسخه دوم"
