"""The analysis our templates define, run by the real node: the Persian analyzer folds Arabic and Persian
letter forms and digits and splits at ZWNJ (``.joined``: drops it); the casefold normalizer folds case and
accents. On the local test node the analysis-common components come from our test
analysis plugin (over Lucene's classes); these expectations are Elasticsearch's, so on any real
cluster (``CRAWL_TEST_ES_URL``) they must hold as well."""

from __future__ import annotations

import pytest
from elasticsearch import BadRequestError

from crawl_assets.index.indices import ensure_index, ensure_template
from crawl_assets.index.naming import index_name
from crawl_assets_tests.index.conftest import EsTarget

ZWNJ = "\u200c"


@pytest.fixture
def index(es: EsTarget) -> str:
    ensure_template(es.client, "records")
    name = index_name("records", es.tenant, "2026.01")
    ensure_index(es.client, name, "records", es.tenant)
    return name


def tokens(es: EsTarget, text: str, **how) -> list[str]:
    return [t["token"] for t in es.client.indices.analyze(text=text, **how)["tokens"]]


def test_persian_text_folds_letter_forms_digits_and_zwnj(es: EsTarget, index: str) -> None:
    def persian(text: str) -> list[str]:
        return tokens(es, text, index=index, analyzer="persian_text")

    # Persian keheh/yeh and the Arabic kaf/yeh become one form (Lucene folds to the Arabic letters).
    assert persian("کتاب") == persian("كتاب") == ["كتاب"]
    assert persian("علی") == persian("علي") == persian("على") == ["علي"]
    # Alef variants, teh marbuta and heh goal / heh with yeh: one form each.
    assert persian("أحمد") == persian("احمد")
    assert persian("مدرسة") == persian("مدرسه")
    # Persian (۱۲۳) and Arabic-Indic (١٢٣) digits are the ASCII ones.
    assert persian("سال ۱۴۰۲") == persian("سال ١٤٠٢") == persian("سال 1402") == ["سال", "1402"]
    # ZWNJ separates like a space (the compound's parts are words of their own) ...
    assert persian(f"دانش{ZWNJ}آموز") == persian("دانش آموز") == ["دانش", "اموز"]
    # ... Persian stop words go (the prefix "می" is one), Latin text is lower-cased.
    assert persian(f"کتاب و قلم می{ZWNJ}خواهم Hello") == ["كتاب", "قلم", "خواهم", "hello"]


def test_casefold_normalizer_and_the_text_fields(es: EsTarget, index: str) -> None:
    assert tokens(es, "Café_ÜBER", index=index, normalizer="casefold") == ["cafe_uber"]
    assert tokens(es, f"Running می{ZWNJ}خواهم", index=index, field="text_clean") == ["running", "خواهم"]
    assert tokens(es, f"Running می{ZWNJ}خواهم", index=index, field="text_clean.joined") == ["running", "ميخواهم"]


def test_mapping_char_filter_rules_like_elasticsearch(es: EsTarget) -> None:
    rules = ["\\u200C=>\\u0020", "ph => f", "a=>b=>c", "\\\\ => slash", "\\t=>tab", "x =>"]
    got = tokens(es, "ph\u200cone a=>b \\ \t xq", tokenizer="standard",
                 char_filter=[{"type": "mapping", "mappings": rules}])
    # split at the last "=>", sides trimmed, \uXXXX / \\ / \t escapes read, an empty target deletes
    assert got == ["f", "one", "c", "slash", "tab", "q"]
    with pytest.raises(BadRequestError):
        es.client.indices.analyze(text="x", tokenizer="standard", char_filter=[{"type": "mapping", "mappings": ["no arrow"]}])
    with pytest.raises(BadRequestError):
        es.client.indices.analyze(text="x", tokenizer="standard", char_filter=[{"type": "mapping"}])


def test_asciifolding_preserve_original(es: EsTarget) -> None:
    folded = es.client.indices.analyze(text="Café", tokenizer="standard",
                                       filter=["lowercase", {"type": "asciifolding", "preserve_original": True}])
    assert [(t["token"], t["position"]) for t in folded["tokens"]] == [("cafe", 0), ("café", 0)]
    assert tokens(es, "Café", tokenizer="standard", filter=["asciifolding"]) == ["Cafe"]
