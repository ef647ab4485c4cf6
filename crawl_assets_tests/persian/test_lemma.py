"""The Persian lemmatizer (``persian.lemma``): rules, and a fifth of bench/persian_search's sets kept at
the goals (the whole sets and the peers: bench/persian_search_eval.py)."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from crawl_assets.persian import lemma as lemma_module
from crawl_assets.persian.lemma import WORD, lemma, lemma_text, lemmas, words

SETS = Path(__file__).resolve().parents[2] / "bench" / "persian_search"
ZWNJ = "\u200c"


def _rows(name: str) -> list[dict[str, str]]:
    with open(SETS / name, encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


@pytest.mark.parametrize("form, base", [
    ("کتاب" + ZWNJ + "ها", "کتاب"), ("کتابهای", "کتاب"), ("کتابی", "کتاب"), ("کتاب" + ZWNJ + "هایمان", "کتاب"),
    ("بزرگ" + ZWNJ + "ترین", "بزرگ"), ("دانشجویان", "دانشجو"), ("پرندگان", "پرنده"), ("خانه" + ZWNJ + "ام", "خانه"),
    ("می" + ZWNJ + "خواهم", "خواستن"), ("میخوام", "خواستن"), ("نمی" + ZWNJ + "دانم", "دانستن"), ("نمیدونم", "دانستن"),
    ("رفته" + ZWNJ + "ام", "رفتن"), ("بیاورد", "آوردن"), ("اونا", "آنها"), ("خونه", "خانه"), ("كتاب", "کتاب"),
])
def test_forms_meet_their_base(form: str, base: str) -> None:
    assert lemma(form) == lemma(base)


@pytest.mark.parametrize("a, b", [("ایران", "ایر"), ("باران", "بار"), ("مردم", "مرد"), ("ماهی", "ماه"),
                                  ("میدان", "دانستن"), ("میز", "زدن"), ("کارگر", "کار"), ("بیان", "بی")])
def test_look_alikes_stay_apart(a: str, b: str) -> None:
    assert lemma(a) != lemma(b)


@pytest.mark.parametrize("a, b", [
    ("مرام", "مرا"), ("ثبوت", "ثبو"),     # a possessive after a final ا or و is written یم, یت (پایم)
    ("رحیم", "رحی"), ("حریم", "حری"),     # and after a final ی apart, ‌ام (صندلی‌ام)
    ("حرمت", "حرم"),                     # a stem of three letters under م ت ش ی must be a known short word
    ("پذیرش", "پذیر"), ("گریزان", "گریز"),  # a present stem with ش or ان: an action noun, a participle
    ("سلمان", "سلم"),                      # and under the plural ان (of animate nouns: مردان)
    ("استر", "اس"),                        # a comparative of two letters must be a known adjective (بدتر)
    ("کفالت", "کفال"),                     # Arabic فعالة, not a possessive
])
def test_look_alikes_stay_apart_by_rule_not_by_list(a: str, b: str) -> None:
    assert lemma(a) != lemma(b)


@pytest.mark.parametrize("form, base", [("آقایان", "آقا"), ("آقای", "آقا"), ("درختان", "درخت"), ("معلمان", "معلم"),
                                        ("ساعات", "ساعت"), ("کارم", "کار"), ("بدتر", "بد"), ("سفرمان", "سفر")])
def test_forms_of_short_and_vowel_final_words_still_meet(form: str, base: str) -> None:
    assert lemma(form) == lemma(base)


def test_arabic_light_stems_only_for_arabic() -> None:
    assert lemma("والكتاب", "ar") == lemma("كتاب", "ar")
    assert lemma("وزیر", "ar") == "وزیر"  # a leading و of a three-letter stem is the word's own
    assert lemma("والد") == "والد"  # Persian rules never strip an article


def test_lemma_text_leaves_suffixes_written_apart_out() -> None:
    assert lemmas("کتاب ها و می خواهم") == ["کتاب", "و", "خواستن"]
    assert lemma_text("Hello کتاب‌ها 2024") == "hello کتاب 2024"


def test_a_fifth_of_the_evaluation_sets_meets_the_goals() -> None:
    pairs = _rows("pairs.tsv")[::5]
    hits, totals = Counter(), Counter()
    for p in pairs:
        lang = "ar" if p["class"] == "arabic" else "fa"
        totals[p["class"]] += 1
        hits[p["class"]] += lemma(p["form"], lang) == lemma(p["base"], lang)
    assert set(totals) == {"plural", "possessive", "comparative", "zwnj", "verb", "colloquial", "arabic"}
    low = {c: hits[c] / totals[c] for c in totals if hits[c] / totals[c] < 0.9}
    assert not low, low
    calibration = [p for p in _rows("must_not.tsv") if not p["class"].startswith("heldout")][::5]
    apart = sum(lemma(p["a"]) != lemma(p["b"]) for p in calibration) / len(calibration)
    assert apart >= 0.9


def test_words_are_the_word_pattern_over_every_code_point() -> None:
    """``words`` (one character class once "_" is a space) splits any text as ``WORD`` does: every code point
    alone, beside letters, underscores and ZWNJ."""
    every = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for glue in ("", "a", "_", ZWNJ, " ", "ب_" + ZWNJ):
        text = glue.join(every)
        assert words(text) == WORD.findall(text), repr(glue)
    for text in ("", "_", "__a__", "a_b", ZWNJ + "_" + ZWNJ, "user_000307 کتاب" + ZWNJ + "ها_ی", "x" + ZWNJ):
        assert words(text) == WORD.findall(text), text


def test_lemma_text_from_known_pieces_is_the_word_by_word_rule() -> None:
    """The same text lemmatized with cold caches and again with every piece known (looked up at once) gives
    the word-by-word rule's text: lemmas in order, one space apart, suffixes written apart left out."""
    texts = [row["text"] for row in _rows("posts.tsv")[:300]] + [
        "کتاب ها و کتاب‌هایمان", "خبر_فوری #خبر_فوری @user_1", "الكتاب والكتب", "", "__", "ها ها", "Hello WORLD 42"]
    for lang in ("fa", "ar"):
        lemma_module._CACHE.clear()
        for cache in (*lemma_module._TOKENS, *lemma_module._PIECES):
            cache.clear()
        cold = [lemma_text(text, lang) for text in texts]
        assert cold == [" ".join(lemmas(text, lang)) for text in texts]
        assert [lemma_text(text, lang) for text in texts] == cold
        assert cold[texts.index("کتاب ها و کتاب‌هایمان")].split() == [lemma(w, lang) for w in ("کتاب", "و", "کتاب‌هایمان")]


def test_lemma_text_by_pieces_is_the_word_rule_whatever_the_whitespace() -> None:
    """No word spans whitespace of any kind, so lemmas looked up per whitespace-separated piece are the text's:
    every code point beside words, glued by each Unicode space, ZWNJ at a piece's edge, pieces met twice."""
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()]
    every = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    texts = [space.join(["کتاب", "ها", ZWNJ + "کتاب‌هایم" + ZWNJ, "user_1", "a" + space + "b"]) for space in spaces]
    texts += ["کتاب".join(every[i:i + 4000]) for i in range(0, len(every), 4000)][::9]
    texts += [" ".join(every[i:i + 50]) for i in range(0, 20000, 50)]
    for cache in lemma_module._PIECES:
        cache.clear()
    for lang in ("fa", "ar", "fa", "ar"):  # pieces unknown, then known (for each language apart)
        assert [lemma_text(text, lang) for text in texts] == [" ".join(lemmas(text, lang)) for text in texts], lang


def test_a_long_piece_is_lemmatized_but_not_kept() -> None:
    """A text of a script written without spaces is one piece: its lemmas are the word rule's, and the piece
    cache keeps short pieces only, so its size stays bounded whatever the texts."""
    long_piece = "كتابهايمان" * (lemma_module.PIECE_MAX // 10 + 1)
    for cache in lemma_module._PIECES:
        cache.clear()
    text = f"کتاب {long_piece} 東京都の天気は晴れです"
    assert lemma_text(text) == " ".join(lemmas(text))
    kept = lemma_module._PIECES[False]
    assert "کتاب" in kept and long_piece not in kept
    assert all(len(piece) <= lemma_module.PIECE_MAX for piece in kept)
