"""Persian-aware ``text_clean`` rules and tag folding."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawl_assets.normalize.text import _TABLE, ZWNJ, _fix_zwnj, clean_text, fold_tag, unique


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("كتاب", "کتاب"),  # Arabic kaf -> keheh
        ("علي", "علی"),  # Arabic yeh -> Farsi yeh
        ("مصطفى", "مصطفی"),  # alef maksura -> Farsi yeh
        ("۱۲۳۴۵۶۷۸۹۰", "1234567890"),  # Persian digits
        ("٠١٢٣٤٥٦٧٨٩", "0123456789"),  # Arabic-Indic digits
        ("خبــــر", "خبر"),  # tatweel
        ("سَلامٌ عَلَيْكُم", "سلام علیکم"),  # harakat, sukun; yeh/kaf inside
        ("\u200fسلام\u200e \u202bدنیا\u202c \u2067x\u2069", "سلام دنیا x"),  # bidi controls
        ("ﻻ ﷲ", "لا الله"),  # presentation forms (NFKC)
        ("  a \n\t b\u00a0c  ", "a b c"),  # whitespace runs and NBSP
        ("plain ascii text", "plain ascii text"),
        ("", ""),
        ("\u200b\ufeffتست", "تست"),  # zero-width space, BOM
    ],
)
def test_clean_text_rules(raw, clean):
    assert clean_text(raw) == clean


def test_zwnj_kept_between_letters_only():
    assert clean_text("می" + ZWNJ + "خواهم") == "می" + ZWNJ + "خواهم"
    assert clean_text("می" + ZWNJ * 3 + "خواهم") == "می" + ZWNJ + "خواهم"
    assert clean_text(ZWNJ + "کتاب" + ZWNJ + " ها" + ZWNJ) == "کتاب ها"
    assert clean_text("کتاب" + ZWNJ + "۲") == "کتاب2"
    assert clean_text(ZWNJ) == ""


def _clean_text_by_the_rules(text: str) -> str:
    """The rules of ``clean_text`` applied literally, one full pass each (slow, obviously right)."""
    return " ".join(_fix_zwnj(unicodedata.normalize("NFKC", text).translate(_TABLE)).split())


# Persian and Arabic letters, ZWNJ next to letters, digits, marks and other scripts' letters, whitespace of
# all kinds, controls that are removed and compatibility forms that NFKC changes.
_TRICKY = (
    "میخواهمکتابها"
    + "يكىةأ"
    + ZWNJ * 4
    + "۱۲٠٩2²①"
    + "\u064b\u0670\u0640\u06d6"
    + "क्षa_Z"
    + " \t\n\u00a0\u3000\u2028\u2029\u0085\u1680\u202f\x1c"
    + "\u200b\u200e\u202b\ufeff\u00ad"
    + "\ufdfa\ufb8e\ufef5\u00a8"
    + "👨\u200d#@"
)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(_TRICKY), max_size=30) | st.text(max_size=30))
def test_clean_text_fast_paths_follow_the_rules(text):
    assert clean_text(text) == _clean_text_by_the_rules(text)


def test_emoji_sequences_survive():
    family = "👨\u200d👩\u200d👧"
    assert clean_text(f"سلام {family} 🎉") == f"سلام {family} 🎉"


def test_clean_text_is_idempotent_on_mixed_text():
    text = "قيمت نان ۱۵٪ بالا رفت\u200c #خبر_فوري ‏@Ali_Reza https://example.org/a?b=1"
    once = clean_text(text)
    assert clean_text(once) == once
    assert "ي" not in once and "15" in once


def test_fold_tag_unifies_spellings_and_case():
    assert fold_tag("#خبر_فوري") == fold_tag("خبر_فوری") == "خبر_فوری"
    assert fold_tag("@Ali_Reza") == "ali_reza"
    assert fold_tag("#News") == "news"
    assert fold_tag("＃Markets") == "markets"


def test_unique_keeps_first_seen_order():
    assert unique(["b", "a", "b", "", "c", "a"]) == ["b", "a", "c"]
    assert unique([""]) == []
