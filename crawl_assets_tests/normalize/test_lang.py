"""Language identification: Persian vs Arabic (and the rest) offline (rules first, then fastText lite)."""

from __future__ import annotations

import pytest

from crawl_assets.normalize.lang import detect_lang, platform_lang
from crawl_assets.normalize.text import clean_text


@pytest.mark.parametrize(
    "text",
    [
        "خبر فوری",  # py3langid alone said "ur"
        "گزارش",  # one word with a Persian-only letter
        "چرا؟",
        "پیام",
        "سلام دوستان",
        "مرسی",
        "این یک پیام است",
        "من به مدرسه رفتم",
        "اين كتاب خيلي خوب است",  # Persian typed on an Arabic keyboard (ي ك)
        "ميخواهم بروم",
        "سلام به همه دوستان عزيز",
        "رئیس جمهور امروز گفت دولت اعلام خواهد کرد",
        "الان میام خونه",  # Persian word starting with ال
    ],
)
def test_persian(text):
    assert detect_lang(text) == "fa"


@pytest.mark.parametrize(
    "text",
    [
        "مرحبا بكم في القناة",
        "هذا كتاب جميل جدا",
        "ذهبت إلى المدرسة",
        "شكرا جزيلا",
        "الله أكبر",
        "قال الرئيس اليوم إن الحكومة ستعلن",
        "المدرسة",
    ],
)
def test_arabic(text):
    assert detect_lang(text) == "ar"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("hello world, how are you today", "en"),
        ("Das ist ein schöner Tag heute", "de"),
        ("یہ ایک کتاب ہے", "ur"),
        ("زه ښه یم", "ps"),
        ("Привет, как дела у тебя сегодня", "ru"),
    ],
)
def test_other_languages(text, lang):
    assert detect_lang(text) == lang


@pytest.mark.parametrize("text", ["", "ok", "😀🎉", "123 456", "https://example.org/a/b/c", "@someone #tag"])
def test_too_little_text_is_none(text):
    assert detect_lang(text) is None


def test_urls_and_handles_do_not_vote():
    assert detect_lang("@news_account https://example.org/report امروز گزارش تازه منتشر شد") == "fa"


def test_detection_needs_the_raw_text():
    arabic = "هذا كتاب جميل جدا في المدينة"
    assert detect_lang(arabic) == "ar"
    assert "ی" in clean_text(arabic)  # cleaning maps Arabic yeh to Farsi yeh: the raw text must be used


@pytest.mark.parametrize(
    ("tag", "lang"),
    [("fa", "fa"), ("en-GB", "en"), ("pt_BR", "pt"), ("in", "id"), ("iw", "he"), ("und", None), ("qme", None),
     ("zxx", None), ("", None), (None, None), (3, None), ("ab1", None)],
)  # fmt: skip
def test_platform_lang(tag, lang):
    assert platform_lang(tag) == lang
