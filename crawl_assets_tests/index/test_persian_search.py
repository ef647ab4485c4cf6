"""Word forms on the real node: a search finds every form of its words through ``text_lemma`` (written by the
sink, kept out of ``_source``), exact spellings rank first, and ``-word`` excludes all forms of a word."""

from __future__ import annotations

from pathlib import Path

from crawl_assets.query.filters import RecordFilter
from crawl_assets.api.pages import search_page
from crawl_assets.index.sink import index_documents
from crawl_assets_tests.index.conftest import EsTarget
from crawl_assets_tests.index.docs import record

ZWNJ = "\u200c"
TEXTS = {
    0: "کتاب تازه رسید", 1: "کتاب" + ZWNJ + "هایمان را آوردیم", 2: "کتابهای قدیمی", 3: "یک کتابی خریدم",
    4: "بار سنگین بود", 5: "باران آمد", 6: "می" + ZWNJ + "خواهم بروم", 7: "میخوام برم خونه",
    8: "الكتاب الجديد",
}


def _index(es: EsTarget, tmp_path: Path) -> None:
    docs = [record(i, es.tenant, text=t, lang="ar" if i == 8 else "fa") for i, t in TEXTS.items()]
    stats = index_documents(es.client, docs, family="records", tenant=es.tenant, deadletter_root=str(tmp_path))
    assert stats.created == len(docs)


def _keys(es: EsTarget, q: str, **flt) -> list[str]:
    page = search_page(es.client, es.tenant, RecordFilter(q=q, **flt), size=50)
    return [r["key"] for r in page.records]


def test_every_form_of_a_word_is_found_exact_first(es: EsTarget, tmp_path: Path) -> None:
    _index(es, tmp_path)
    found = _keys(es, "کتاب")
    assert set(found) == {f"x:{1000 + i}" for i in (0, 1, 2, 3, 8)}, "Persian forms, and Arabic الكتاب"
    assert found[0] == "x:1000", "the exact spelling scores above the other forms"
    assert set(_keys(es, "باران")) == {"x:1005"}, "a look-alike (بار) is not a form of it"
    assert set(_keys(es, "خواستن")) == {"x:1006", "x:1007"}, "formal and colloquial forms of a verb"
    assert set(_keys(es, "كتب", langs=("ar",))) == set() and set(_keys(es, "كتاب", langs=("ar",))) == {"x:1008"}
    page = search_page(es.client, es.tenant, RecordFilter(q="کتاب"), size=1)
    assert "text_lemma" not in page.records[0], "indexed, not stored"


def test_a_negated_word_excludes_all_its_forms(es: EsTarget, tmp_path: Path) -> None:
    _index(es, tmp_path)
    assert set(_keys(es, "کتاب -قدیمی")) == {f"x:{1000 + i}" for i in (0, 1, 3, 8)}
    assert "x:1003" not in _keys(es, "خریدم -کتاب"), "کتابی is a form of the excluded word"


def test_hashtags_and_rising_words_counted_by_lemma_with_their_forms(es: EsTarget, tmp_path: Path) -> None:
    from datetime import datetime, timedelta, timezone

    from crawl_assets.query.aggregations import top
    from crawl_assets.query.trends import trends

    tags = ["کتاب", "کتاب" + ZWNJ + "ها", "کتابها", "کتاب", "باران"]
    docs = [record(i, es.tenant, text=f"کتاب {i}", hashtags=[tags[i % 5]]) for i in range(10)]
    docs += [record(20 + i, es.tenant, month=2, text=t, hashtags=[]) for i, t in
             enumerate(["باران آمد", "بارانی بود", "باران" + ZWNJ + "ها", "بارانها", "باران", "بار سنگین"])]
    index_documents(es.client, docs, family="records", tenant=es.tenant, deadletter_root=str(tmp_path))
    got = top(es.client, es.tenant, RecordFilter(), "hashtags", size=5, lemmas=True)
    assert [(b["value"], b["lemma"], b["count"]) for b in got["buckets"]] == [("کتاب", "کتاب", 8), ("باران", "باران", 2)]
    assert [f["form"] for f in got["buckets"][0]["forms"]][0] == "کتاب" and len(got["buckets"][0]["forms"]) == 3
    # February's posts (created on days 21..26) against January's baseline: forms of باران rise together
    rising = trends(es.client, es.tenant, RecordFilter(), what="words", lemmas=True, min_count=2,
                    end=datetime(2026, 3, 1, tzinfo=timezone.utc), window=timedelta(days=28), baseline=1)
    first = rising["items"][0]
    assert first["item"] == first["lemma"] == "باران" and first["count"] == 5, rising["items"]
    assert len(first["forms"]) >= 2 and "بار" not in [f["form"] for f in first["forms"]]
