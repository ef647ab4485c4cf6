"""The stemming filters bench/persian_search_eval.py compares our lemmas with (``persian_stem``, ``arabic_stem``,
``keyword_marker``, ``stemmer_override``), run by the real node as analysis-common defines them; on the local
node they come from the analysis plugin, built for each server line."""

from __future__ import annotations

from crawl_assets_tests.index.conftest import EsTarget


NORMALIZE = ("arabic_normalization", "persian_normalization")  # as the records analyzers fold letters first


def stems(es: EsTarget, text: str, *filters: dict) -> list[str]:
    got = es.client.indices.analyze(text=text, tokenizer="standard", filter=[*NORMALIZE, *filters])
    return [t["token"] for t in got["tokens"]]


def test_persian_and_arabic_stems_with_protected_words_and_overrides(es: EsTarget) -> None:
    persian = {"type": "persian_stem"}
    # Lucene's PersianStemmer strips plural and comparative endings, and the known failure: ایران -> ایر
    assert stems(es, "کتابها بزرگترین ایران", persian) == stems(es, "کتاب بزرگ ایر")
    protect = {"type": "keyword_marker", "keywords": stems(es, "ایران")}
    assert stems(es, "کتابها ایران", protect, persian) == stems(es, "کتاب ایران"), "a protected word is not stemmed"
    kutub, library, kitab = stems(es, "کتب کتابخانه کتاب")
    override = {"type": "stemmer_override", "rules": [f"{kutub}, {library} => {kitab}"]}
    assert stems(es, "کتب کتابخانه ایران", override, protect, persian) == stems(es, "کتاب کتاب ایران")
    assert stems(es, "الكتاب والكتب", {"type": "arabic_stem"}) == stems(es, "كتاب كتب")
