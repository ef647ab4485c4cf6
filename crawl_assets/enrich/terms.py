"""Words of a text for topic models: Persian, Arabic and English, each word with its light stem.

A word is a run of letters, digits, ``_`` and ZWNJ in ``text_clean`` (whose letter forms are already
folded: ی, ک, no diacritics or tatweel), casefolded, with links and @handles dropped (a hashtag's words are
kept: ``#قطعی_برق`` gives قطعی and برق). ZWNJ is removed inside a word (می‌شود and میشود are one word). Stop
words (``stopwords.py``), words of fewer than two letters and numbers are left out.

Stems are light, rule-based suffix (and Arabic article) stripping, so that plural and inflected forms of a
word count as one term; a stem is only a grouping key (topics show the surface forms seen most). Rules, tried
longest first, keeping at least ``MIN_STEM`` letters:

* English: -ies -> -y; -sses -> -ss; -s (not after s, u, i); -ing / -ed when four letters remain (with a
  doubled final consonant undone: planning -> plan).
* Persian: plural and comparative suffixes -هایی -های -ها -ترین -تر, and -ات on words of at least five
  letters (not -ان: too many names end so).
* Arabic: the article ال (and وال / بال / فال / كال / لل) at the start; -ات -ون -ين -ة (ة -> nothing; ه
  after ة folding is kept).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from crawl_assets.enrich.stopwords import ARABIC, ENGLISH, PERSIAN
from crawl_assets.normalize.text import clean_text

MIN_STEM = 2
_DROP = re.compile(r"https?://\S+|www\.\S+|@[\w\u200c]+")
_WORD = re.compile(r"[^\W\d][\w\u200c]*", re.UNICODE)
_STOP = frozenset(clean_text(w).casefold().replace("\u200c", "") for w in ENGLISH + PERSIAN + ARABIC)  # (في -> فی)
_ARABIC_SCRIPT = re.compile(r"[\u0600-\u06ff]")
_PERSIAN_ONLY = re.compile(r"[پچژگ]")  # letters Arabic does not use (ک and ی are Arabic's too after text_clean)
_EN_DOUBLE = re.compile(r"([bdgklmnprt])\1$")
_FA_SUFFIXES = ("هایی", "های", "ها", "ترین", "تر")
_FA_LONG_SUFFIXES = ("ات",)  # (not -ان: تهران, ایران, اصفهان are no plurals)
_AR_PREFIXES = ("وال", "بال", "فال", "کال", "لل", "ال")  # (text_clean folds ك to ک)
_AR_SUFFIXES = ("ات", "ون", "ين", "ة")


def stem(word: str) -> str:
    """The light stem of one casefolded word (see the module docstring)."""
    if not _ARABIC_SCRIPT.search(word):
        return _stem_latin(word)
    if word.startswith(_AR_PREFIXES) and not _PERSIAN_ONLY.search(word):
        return _stem_arabic(word)
    for suffix in _FA_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            return word[:-len(suffix)]
    if len(word) >= 5:
        for suffix in _FA_LONG_SUFFIXES:
            if word.endswith(suffix):
                return word[:-len(suffix)]
    if "ة" in word:
        return _stem_arabic(word)
    return word


def _stem_arabic(word: str) -> str:
    for prefix in _AR_PREFIXES:
        if word.startswith(prefix) and len(word) - len(prefix) >= MIN_STEM + 1:
            word = word[len(prefix):]
            break
    for suffix in _AR_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM + 1:
            return word[:-len(suffix)]
    return word


def _stem_latin(word: str) -> str:
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            base = word[:-len(suffix)]
            return base[:-1] if _EN_DOUBLE.search(base) else base
    return word


def words(text: str) -> Iterator[tuple[str, str]]:
    """``(word, surface form)`` of each casefolded word of ``text`` that can be a term (no stop word, link,
    handle or number): the word without ZWNJ, the surface form as written (casefolded)."""
    for match in _WORD.finditer(_DROP.sub(" ", text.casefold())):
        for surface in match.group().strip("\u200c").split("_"):
            word = surface.replace("\u200c", "")
            if len(word) >= 2 and word not in _STOP and not word.isdigit():
                yield word, surface


def terms(text: str) -> list[tuple[str, str]]:
    """``(stem, surface form)`` of every term of ``text``, in order (repeats kept: they are counts)."""
    return [(stem(w), s) for w, s in words(text)]
