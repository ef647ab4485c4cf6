"""Lemmas of Persian (and light stems of Arabic) words: the one lemmatizer of the index's ``text_lemma``
field, of queries on it, and of lemma-level trends and aggregations (docs/SCHEMA.md, "Word forms").

A word is folded first (Arabic letter forms, hamza and madda, diacritics, digits: what the search analyzers
fold), then, in order:

1. ``IRREGULAR`` (colloquial words, Arabic feminine plurals, irregular comparatives) and ``PROTECTED`` words
   (an ending that only looks like a suffix: ``ایران``, ``باران``, ``مردم``) are answered at once;
2. a verb: an optional prefix (``نمی``, ``می``, ``ن``, ``ب``), a past or present stem of ``VERBS`` and a
   personal ending (formal or colloquial), or a past participle and the perfect: its infinitive;
3. otherwise suffixes are stripped from the end while one matches (plural ``ها ان ات گان``, possessive and
   ezafe ``م ت ش مان تان شان ی ای``, colloquial ``مون تون شون``, ``تر ترین``), stopping at a protected word,
   and only as Persian spells them: a stem shorter than four letters under a possessive, ``ی`` or ``ان``
   (three under ``ات تر``) must be a known short word (``SHORT_STEMS``: سالم stays whole, کارم is کار); no bare
   ``م ت ش ان ات`` after a final ا or و (پایم, دانشجویان) nor ``م ت ش`` after a final ی (صندلی‌ام); a present
   stem with ``ش`` or ``ان`` is a word of its own (گردش, خندان); ``ت`` after the Arabic فعال is فعالة (رقابت).

A ZWNJ is a morpheme boundary: ``کتاب‌هایم`` is ``کتاب`` + suffixes, ``می‌خوانم`` a verb, ``دانش‌آموز`` a
compound read as one word. Arabic (``lang == "ar"``) gets a light stemmer: the article and a leading
conjunction or preposition with it, and the common plural, dual and pronoun endings.
"""

from __future__ import annotations

import re

from crawl_assets.persian.lexicon import IRREGULAR, LIGHT, LIGHT_COLLOQUIAL, PROTECTED, SHORT_STEMS, VERBS

# Declared, bumped whenever a lemma changes (the golden test of declared versions guards it): an index whose
# text_lemma another version made is named by ``es setup`` for a reindex, which recomputes it.
LEMMA_VERSION = "2026.12.4"

ZWNJ = "\u200c"
_FOLD = {ord(a): b for a, b in {"آ": "ا", "أ": "ا", "إ": "ا", "ٱ": "ا", "ة": "ه", "ۀ": "ه", "ؤ": "و", "ئ": "ی",
                                  "ي": "ی", "ى": "ی", "ك": "ک", "ء": "", "\u0654": "", "\u0640": "",
                                  "\u200d": ""}.items()}
_FOLD.update({cp: None for cp in range(0x064B, 0x0660) if cp != 0x0654})
_FOLD[0x0670] = None
_FOLD.update({0x06F0 + d: str(d) for d in range(10)})
_FOLD.update({0x0660 + d: str(d) for d in range(10)})
_ARABIC_SCRIPT = re.compile(r"[\u0600-\u06ff]")
# letters and digits, ZWNJ inside a word; runs of letters matched at once (a per-letter alternation is slower)
WORD = re.compile(r"(?:[^\W_]+|\u200c)+")
_RUNS = re.compile(r"[\w\u200c]+")  # WORD's runs once "_" is a space: one class, a third faster than WORD


def words(text: str) -> list[str]:
    """``WORD.findall(text)``: the words of a text, in order."""
    return _RUNS.findall(text.replace("_", " "))


def fold(word: str) -> str:
    """The word as the lemmatizer compares it (ZWNJ kept: it marks morpheme boundaries)."""
    return word.translate(_FOLD).lower()


def _folded_set(words) -> frozenset[str]:
    return frozenset(fold(w).replace(ZWNJ, "") for w in words)


_PROTECTED = _folded_set(PROTECTED)
_IRREGULAR = {fold(k).replace(ZWNJ, ""): fold(v) for k, v in IRREGULAR.items()}
_PAST: dict[str, str] = {}
_PRESENT: dict[str, str] = {}
for _infinitive, _pasts, _presents in VERBS:
    for _stem in _pasts:
        _PAST.setdefault(fold(_stem), fold(_infinitive))
    for _stem in _presents:
        _PRESENT.setdefault(fold(_stem), fold(_infinitive))
_LIGHT = frozenset(fold(s) for s in LIGHT)
_LIGHT_COLLOQUIAL = frozenset(fold(s) for s in LIGHT_COLLOQUIAL)
_SHORT = frozenset(fold(s) for s in SHORT_STEMS)

_PREFIXES = ("نمی", "می", "ن", "ب", "")
# shortest first: the longest stem wins (بخواند is ب + خوان + د, not ب + خوا + ند)
_PAST_ENDINGS = ("", "ه", "م", "ی", "ن", "یم", "ید", "ند", "ین", "هام", "های", "هایم", "هاید", "هاند")
_PRESENT_ENDINGS = ("", "م", "ی", "د", "ه", "ن", "یم", "ید", "ند", "ین")
_COLLOQUIAL_ENDINGS = frozenset(("ین", "ه", "ن"))
# Suffixes, longest first; each with the letters the remaining stem must end with (None: any).
_VOWEL_END = ("ا", "و")
_SUFFIXES: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    ("هایمان", None), ("هایتان", None), ("هایشان", None), ("هامون", None), ("هاتون", None), ("هاشون", None),
    ("هایم", None), ("هایت", None), ("هایش", None), ("هایی", None), ("ترین", None), ("های", None),
    ("یمان", _VOWEL_END), ("یتان", _VOWEL_END), ("یشان", _VOWEL_END), ("امون", None), ("اتون", None),
    ("اشون", None), ("مان", None), ("تان", None), ("شان", None), ("مون", None), ("تون", None), ("شون", None),
    ("گان", None), ("ها", None), ("تر", None), ("ان", None), ("ات", None), ("ام", ("ه",)), ("اش", ("ه",)),
    ("ای", ("ه",)), ("یی", _VOWEL_END), ("یم", _VOWEL_END), ("یت", _VOWEL_END), ("یش", _VOWEL_END),
    ("م", None), ("ت", None), ("ش", None), ("ی", None),
)
_PLURAL_AN_AT = frozenset(("ان", "ات"))
_PERSONAL = frozenset(("مان", "تان", "شان", "مون", "تون", "شون"))
_ONE_LETTER = frozenset(("م", "ت", "ش"))  # possessives written without a vowel of their own
_GLIDED = _ONE_LETTER | _PLURAL_AN_AT  # written with ی after a final vowel (پایم, دانشجویان)
_DERIVING = frozenset(("ش", "ان"))  # after a present stem: an action noun or a participle (گردش, خندان)
_SUFFIX_WORDS = frozenset(s for s, _ in _SUFFIXES if len(s) > 1) | {"می", "نمی", "ی"}
_ARABIC_PREFIXES = ("وال", "بال", "کال", "فال", "لل", "ال", "و")
_ARABIC_SUFFIXES = ("هما", "هم", "هن", "کم", "نا", "ها", "ان", "ات", "ون", "ین", "یه", "ه", "ی")

_CACHE: dict[tuple[str, bool], str] = {}
_CACHE_MAX = 200_000


def lemma(word: str, lang: str | None = "fa") -> str:
    """The lemma of one word (folded); Arabic light stem when ``lang`` is ``ar``; other scripts lowercased."""
    arabic = lang == "ar"
    key = (word, arabic)
    found = _CACHE.get(key)
    if found is None:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        found = _CACHE[key] = _lemma(word, arabic)
    return found


def _lemma(word: str, arabic: bool) -> str:
    folded = fold(word).strip(ZWNJ)
    if not _ARABIC_SCRIPT.search(folded):
        return folded.replace(ZWNJ, "")
    if arabic:
        return _arabic(folded.replace(ZWNJ, ""))
    parts = [p for p in folded.split(ZWNJ) if p]
    joined = "".join(parts)
    if joined in _IRREGULAR or joined in _PROTECTED:
        return _IRREGULAR.get(joined, joined)
    if len(parts) > 1 and parts[0] not in ("می", "نمی") and all(_is_suffix_run(p) for p in parts[1:]):
        return _persian(parts[0])
    return _persian(joined)


def _is_suffix_run(part: str) -> bool:
    """Whether a ZWNJ-separated part is suffixes only (``ها``, ``هایشان``, ``ترین``, ``ام``...)."""
    if part in _SUFFIX_WORDS:
        return True
    for suffix, _ in _SUFFIXES:
        if len(suffix) > 1 and part.startswith(suffix) and len(part) > len(suffix):
            if _is_suffix_run(part[len(suffix):]):
                return True
    return False


def _persian(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word in _PROTECTED:
        return word
    verb = _verb(word)
    if verb is not None:
        return verb
    return _strip(word)


def _verb(word: str) -> str | None:
    """The infinitive of a conjugated form of a known verb, else None."""
    for prefix in _PREFIXES:
        if not word.startswith(prefix):
            continue
        rest = word[len(prefix):]
        found = _conjugated(prefix, rest)
        if found is None and prefix in ("ب", "ن") and rest.startswith("یا"):  # بیاور, نیامد: an initial alef
            found = _conjugated(prefix, rest[1:])
        if found is not None:
            return found
    return None


def _conjugated(prefix: str, rest: str) -> str | None:
    """The infinitive when ``rest`` (after ``prefix``) is a known stem and an ending the prefix allows."""
    for ending in _PAST_ENDINGS:
        if ending and not rest.endswith(ending):
            continue
        stem = rest[:len(rest) - len(ending)] if ending else rest
        if stem in _PAST and prefix != "ب":
            return _PAST[stem]
    for ending in _PRESENT_ENDINGS:
        if ending and not rest.endswith(ending):
            continue
        stem = rest[:len(rest) - len(ending)] if ending else rest
        if stem not in _PRESENT:
            continue
        if prefix in ("می", "نمی"):
            ok = bool(ending)
        elif prefix in ("ب", "ن"):
            ok = bool(ending) or len(stem) > 1
        elif ending in _COLLOQUIAL_ENDINGS:
            ok = stem in _LIGHT_COLLOQUIAL
        else:
            ok = bool(ending) and stem in _LIGHT
        if ok:
            return _PRESENT[stem]
    return None


def _strip(word: str) -> str:
    """Suffixes stripped from the end while one applies (see the module docstring)."""
    for _ in range(6):
        chosen = None
        for suffix, after in _SUFFIXES:
            if not word.endswith(suffix):
                continue
            stem = word[:-len(suffix)]
            least = _least(stem, suffix)
            short = len(stem) < 2 or (len(stem) < least and stem not in _SHORT)
            if short or (after is not None and not stem.endswith(after)) or not _spelled(stem, suffix):
                continue
            if suffix == "گان":
                stem += "ه"
            if stem in _PROTECTED or stem in _IRREGULAR:  # a known word under a shorter suffix wins
                return _IRREGULAR.get(stem, stem)
            if suffix in _DERIVING and stem in _PRESENT and stem not in _SHORT:  # گردش, خندان: a word of its own
                return word
            chosen = chosen or stem
        if chosen is None:
            return word
        word = chosen
        verb = _verb(word)
        if verb is not None:
            return verb
    return word


def _least(stem: str, suffix: str) -> int:
    """The shortest stem a suffix is stripped from without the stem being a known short word: four letters for
    the possessives م ت ش مان تان شان..., ی (a glide ی after ا or و excepted: آقای) and the plural ان (animate
    nouns: ویران is no plural), three for ات تر ترین (بیات: no plural of بی), else two."""
    if len(suffix) == 1 or suffix in _PERSONAL or suffix == "ان":
        return 2 if suffix == "ی" and stem.endswith(_VOWEL_END) else 4
    return 3 if suffix in ("ات", "تر", "ترین") else 2


def _spelled(stem: str, suffix: str) -> bool:
    """Whether ``stem`` + ``suffix`` is how the suffix is written: after a final vowel ا or و a possessive
    takes ی (پایم, not پام) and a plural یان/یات; after a final ی, ‌ام/‌ات/‌اش apart (صندلی‌ام, not صندلیم). A final ت after four letters with ا third is
    the Arabic فعالة (رقابت), the likelier reading than a possessive."""
    if suffix in _GLIDED and stem.endswith(_VOWEL_END):
        return False
    if suffix == "ت" and len(stem) == 4 and stem[2] == "ا":  # Arabic فعالة: رقابت, سیاست, not a possessive
        return False
    return not (suffix in _ONE_LETTER and stem.endswith("ی"))


def _arabic(word: str) -> str:
    for prefix in _ARABIC_PREFIXES:
        if word.startswith(prefix) and len(word) - len(prefix) >= (4 if prefix == "و" else 2):
            word = word[len(prefix):]
            break
    stripped = False
    for suffix in _ARABIC_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            word, stripped = word[:-len(suffix)], True
    if stripped and word.endswith("ت") and len(word) > 4:  # a ta marbuta before a suffix: مدرستها
        word = word[:-1]
    return word


def lemmas(text: str, lang: str | None = "fa") -> list[str]:
    """The lemma of every word of ``text`` in order; suffixes written apart (``کتاب ها``) are left out."""
    arabic = lang == "ar"
    cache = _TOKENS[arabic]
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    out = []
    for word in words(text or ""):
        found = cache.get(word)
        if found is None:
            found = cache[word] = "" if fold(word) in _SUFFIX_WORDS else lemma(word, lang)
        if found:
            out.append(found)
    return out


_TOKENS: tuple[dict[str, str], dict[str, str]] = ({}, {})  # per word as written: its lemma, "" to leave it out


def lemma_text(text: str, lang: str | None = "fa") -> str:
    """``lemmas`` as the index's ``text_lemma`` holds them: one space between lemmas. Looked up per
    whitespace-separated piece (no word spans whitespace, so a text's lemmas are its pieces' in order): most
    pieces of a load were met before, and a text of known pieces costs a split and lookups."""
    pieces = (text or "").split()
    cache = _PIECES[lang == "ar"]
    found = list(map(cache.get, pieces))
    if None in found:
        if len(cache) >= _CACHE_MAX:
            cache.clear()
        for i, piece in enumerate(pieces):
            if found[i] is None:
                found[i] = " ".join(lemmas(piece, lang))
                if len(piece) <= PIECE_MAX:  # a text of a script without spaces is one piece: not kept
                    cache[piece] = found[i]
    return " ".join(filter(None, found))


PIECE_MAX = 48  # characters: longer pieces are lemmatized each time, so the cache stays a few tens of MiB
_PIECES: tuple[dict[str, str], dict[str, str]] = ({}, {})  # per piece as written: its lemmas joined, "" for none


_QUERY_WORD = re.compile(r"(?:[^\W_]|\u200c)+\*?")


def query_lemmas(query: str, lang: str | None = "fa") -> str:
    """A search string (simple_query_string syntax) with each word replaced by its lemma: operators, quotes
    and ``prefix*`` words (a prefix is not a word) are left as they are."""
    def one(found: re.Match[str]) -> str:
        word = found.group(0)
        return word if word.endswith("*") else lemma(word, lang)

    return _QUERY_WORD.sub(one, query)
