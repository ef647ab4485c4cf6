"""Offline language identification that tells Persian from Arabic.

Model: py3langid (the langid.py Naive Bayes model shipped inside the installed package; no download at
run time). Loading costs ~0.9 s once per process (lazy); a call costs ~100 us, so normalizers call it only
when the platform gave no language of its own.

Why a script pre-pass: generic models confuse short Persian and Arabic texts (py3langid says ``ar``/``arz``
for "سلام", ``ur`` for "خبر فوری"). Letters that exist in Persian but not in Arabic (پ چ ژ گ, keheh ک, Farsi
yeh ی), Arabic-only marks (ة أ إ, the article ال) and frequent function words of each language are strong
signals, so they decide first. Arabic yeh/kaf (ي ك) only say "typed on an Arabic keyboard", which many
Persian writers use, so they decide nothing; the model then chooses among Arabic-script languages.
Detection must run on the raw text: ``text_clean`` maps Arabic yeh/kaf to Persian and would erase the signal.
"""

from __future__ import annotations

import functools
import re
from typing import Any

# Model labels -> ISO 639-1. Labels with no 639-1 code (e.g. ``fuv``, ``zxx``) give None; dialect labels
# map to their macro-language.
_TO_ISO1 = {"arz": "ar", "ary": "ar", "sdh": "ku", "ckb": "ku", "uzs": "uz", "yue": "zh", "wuu": "zh"}

_URL_OR_HANDLE = re.compile(r"(?:https?://|www\.)\S+|[@#＠＃][\w\u200c]+", re.UNICODE)
_ARABIC_SCRIPT = re.compile(r"[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff]")
_PERSIAN_ONLY = re.compile(r"[\u067e\u0686\u0698\u06af\u06a9\u06cc]")  # پ چ ژ گ, keheh ک, Farsi yeh ی
_ARABIC_ONLY = re.compile(r"[\u0629\u0623\u0625]|(?<!\w)ال")  # ة أ إ and the article al-
# Frequent function words, spelled with both keyboards' yeh/kaf (so Persian typed on an Arabic keyboard counts).
_PERSIAN_WORDS = frozenset(
    "است را می نمی که كه این اين آن ها های هاي برای براي یک يک يك یا شد شده بود هم چه اینکه ما شما آنها "
    "ولی ولي اگر تا رو همه خیلی خيلي".split()
)
_ARABIC_WORDS = frozenset("في على إلى الى هذا هذه التي الذي الذين عن مع كان كانت ذلك لم لن قد هو هي".split())
# Urdu, Pashto and Sorani Kurdish are told by their own letters; the model only weighs Persian vs Arabic
# (with all Arabic-script labels it says "ur" for many short Persian texts).
_OWN_LETTERS = (
    ("ur", re.compile(r"[\u0679\u0688\u0691\u06ba\u06be\u06c1\u06d2]")),  # ٹ ڈ ڑ ں ھ ہ ے
    ("ps", re.compile(r"[\u067c\u0689\u0693\u0696\u069a\u06ab\u06bc]")),  # ټ ډ ړ ږ ښ ګ ڼ
    ("ku", re.compile(r"[\u0695\u06b5\u06c6\u06ce\u06d5]")),  # ڕ ڵ ۆ ێ ە
)
_ARABIC_SCRIPT_LANGS = ["fa", "ar", "arz", "ary"]

MIN_LETTERS = 3


@functools.cache
def _identifiers() -> tuple[Any, Any]:
    """The general model and one restricted to Arabic-script languages (loaded once, on first use)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    general = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
    arabic_script = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
    arabic_script.set_languages(_ARABIC_SCRIPT_LANGS)
    return general, arabic_script


def _iso1(label: str) -> str | None:
    label = _TO_ISO1.get(label, label)
    return label if len(label) == 2 else None


def detect_lang(text: str) -> str | None:
    """ISO 639-1 code of ``text``'s language, or None when there is too little text to tell."""
    body = _URL_OR_HANDLE.sub(" ", text or "")
    letters = sum(1 for ch in body if ch.isalpha())
    if letters < MIN_LETTERS:
        return None
    arabic_letters = len(_ARABIC_SCRIPT.findall(body))
    if arabic_letters * 2 >= letters:
        return _arabic_script_lang(body)
    general, _ = _identifiers()
    return _iso1(general.classify(body)[0])


def _arabic_script_lang(body: str) -> str | None:
    """Persian, Arabic, Urdu, ... for text mostly in Arabic script: distinctive letters and words, then the model."""
    for lang, letters in _OWN_LETTERS:
        found = len(letters.findall(body))
        if found and found * 50 >= len(body):
            return lang
    words = body.split()
    persian = 2 * len(_PERSIAN_ONLY.findall(body)) + 2 * sum(1 for w in words if w in _PERSIAN_WORDS)
    arabic = 2 * len(_ARABIC_ONLY.findall(body)) + 2 * sum(1 for w in words if w in _ARABIC_WORDS)
    if persian > arabic:
        return "fa"
    if arabic > persian:
        return "ar"
    # No distinctive letter or word: Arabic yeh/kaf alone only say "Arabic keyboard", so the model decides.
    _, restricted = _identifiers()
    return _iso1(restricted.classify(body)[0])


_PLATFORM_LANGS: dict[str, str | None] = {}
_LEGACY = {"in": "id", "iw": "he", "ji": "yi", "jw": "jv"}


def platform_lang(value: object) -> str | None:
    """A platform's own language tag as ISO 639-1, or None for "undetermined" tags (und, qme, zxx, ...)."""
    if not isinstance(value, str):
        return None
    known = _PLATFORM_LANGS.get(value, "?")
    if known != "?":
        return known
    tag = value.strip().lower().replace("_", "-").split("-")[0]
    tag = _LEGACY.get(tag, tag)
    result = tag if len(tag) == 2 and tag.isalpha() and tag.isascii() else None
    if len(_PLATFORM_LANGS) < 1000:  # platforms use a few dozen tags; bound the memo against junk input
        _PLATFORM_LANGS[value] = result
    return result
