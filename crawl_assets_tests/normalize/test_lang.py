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


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Дякую", "uk"),  # the lite model says ru for these: Ukrainian-only words decide
        ("Дуже дякую", "uk"),
        ("Будь ласка", "uk"),
        ("Де ти?", "uk"),
        ("Привiт усiм", "uk"),  # Latin i typed for і; и rules Belarusian out
        ("Дзякуй", "be"),
        ("Што новага?", "be"),  # ы and што: not Ukrainian, not Macedonian
        ("Вельмі смачна", "be"),  # і without и
        ("Усё добра, дзякуй", "be"),
        ("Ты дзе?", "be"),  # дз before a soft vowel
        ("Добры дзень", "be"),
        ("Ўзбекистон", "uz"),  # ў with a Turkic letter (қ ғ ҳ) or none of Belarusian's
        ("Прывітанне ўсім", "be"),  # ў
        ("Хвала, ђаче", "sr"),  # ђ
        ("Ноќ и ѓубре", "mk"),  # ќ ѓ
        ("Рақмет, бәрі жақсы", "kk"),  # қ ә
        ("Ты где?", "ru"),
        ("Спасибо большое", "ru"),
    ],
)
def test_cyrillic_letters_and_words(text, lang):
    assert detect_lang(text) == lang


@pytest.mark.parametrize(
    "text",
    ["ما يشتغل", "ما عجبني", "هم رايحين بكرا", "ليش ما يرد؟", "اهلا وسهلا", "هلا والله", "ما في نت", "هم السبب",
     "وين انت؟", "كيفك؟"],
)
def test_arabic_words_persian_shares_do_not_make_it_persian(text):
    """ما and هم are everyday Arabic: they count for neither language."""
    assert detect_lang(text) == "ar"


@pytest.mark.parametrize(
    ("text", "lang"),
    [("فوق‌العاده‌ست", "fa"),  # ZWNJ: Persian writes it, Arabic never; ال inside a Persian word is not Arabic
     ("خداحافظ", "fa"), ("لطفا جواب بديد", "fa"),
     ("یار کمال کر دیا", "ur"), ("نیا سال مبارک", "ur"), ("کون جیتا؟", "ur")],
)
def test_persian_and_urdu_words(text, lang):
    assert detect_lang(text) == lang


@pytest.mark.parametrize(("text", "lang"), [("Tolle App", "de"), ("Frohe Ostern", "de"), ("Bonne nuit", "fr"),
                                           ("Bonne chance !", "fr"), ("Bored af", "en"), ("Zara Home", None)])
def test_short_latin_text_is_named_by_both_models_or_null(text, lang):
    """fastText lite alone knows none of the first words (it answered its prior, or Danish for "Bored af");
    with lingua weighed in they are named, and a brand name both are unsure of stays null."""
    assert detect_lang(text) == lang


@pytest.mark.parametrize(("text", "lang"), [("Перепрошую", "uk"), ("Оплата не пройшла", "uk"), ("Дабранач", "be"),
                                           ("Жыве Беларусь!", "be"), ("Камера не працуе", "be"), ("Класно", "uk")])
def test_east_slavic_without_letters_of_their_own(text, lang):
    """Ukrainian and Belarusian written only with letters Russian has too: the models tell them (fastText alone
    said Russian for each)."""
    assert detect_lang(text) == lang


def test_bulgarian_and_serbian_need_evidence():
    """No letter or word of theirs: not Bulgarian (no letter of its own) nor Serbian (ј љ њ ђ ћ џ)."""
    assert detect_lang("Бувай") == "uk" and detect_lang("Заблокував") == "uk"
    assert detect_lang("Само у Србији, ђаче") == "sr"


def test_latin_letters_narrow_the_candidates():
    assert detect_lang("Ağabeyim geldi") == "tr"  # ğ: Turkish or Azerbaijani
    assert detect_lang("Größe passt") == "de"  # ß
    assert detect_lang("¿Dónde estás?") == "es"
