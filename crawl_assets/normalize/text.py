"""Persian-aware text normalization for search (``text_clean``) and tag/handle folding.

Why a table and not hazm: hazm 0.10+ pins numpy==1.24.3 and pulls gensim, scipy, scikit-learn, nltk and
fasttext (hundreds of MB, and a numpy downgrade that breaks pandas 3); its ``Normalizer`` also rewrites
affixes and spacing heuristically, which is more than a stable search key needs. The rules below are the
ones the contract names, each a single ``str.translate`` entry or one regex, so they are fast (one pass)
and easy to test:

- Arabic yeh/alef maksura and kaf to Persian (ي ى → ی, ك → ک), Arabic presentation forms via NFKC;
- Persian (۰-۹) and Arabic-Indic (٠-٩) digits to ASCII;
- tatweel, Arabic diacritics (harakat, superscript alef, Quranic marks) and bidi controls removed;
- ZWNJ (U+200C) kept only between two letters, runs collapsed; ZWSP/BOM removed;
- whitespace runs collapsed to one space, ends stripped. Case is kept (search analyzers lowercase).
"""

from __future__ import annotations

import re
import unicodedata

ZWNJ = "\u200c"

_TABLE: dict[int, str | None] = {
    0x064A: "\u06cc",  # ARABIC LETTER YEH -> FARSI YEH
    0x0649: "\u06cc",  # ARABIC LETTER ALEF MAKSURA -> FARSI YEH
    0x0643: "\u06a9",  # ARABIC LETTER KAF -> KEHEH
    0x0640: None,  # TATWEEL
    0x0670: None,  # SUPERSCRIPT ALEF
    0x200B: None,  # ZERO WIDTH SPACE
    0xFEFF: None,  # BOM / ZERO WIDTH NO-BREAK SPACE
    0x00AD: None,  # SOFT HYPHEN
    0x061C: None,  # ARABIC LETTER MARK
    0x200E: None,  # LRM
    0x200F: None,  # RLM
}
_TABLE.update({cp: None for cp in range(0x064B, 0x0660)})  # harakat, shadda, sukun, hamza marks
_TABLE.update({cp: None for cp in range(0x06D6, 0x06EE)})  # Quranic annotation marks
_TABLE.update({cp: None for cp in range(0x202A, 0x202F)})  # LRE RLE PDF LRO RLO
_TABLE.update({cp: None for cp in range(0x2066, 0x206A)})  # LRI RLI FSI PDI
_TABLE.update({0x06F0 + d: str(d) for d in range(10)})  # Persian digits
_TABLE.update({0x0660 + d: str(d) for d in range(10)})  # Arabic-Indic digits

# str.translate walks a dict per character (~14 us for 170 Persian chars); finding the few characters
# that need mapping with one regex and replacing only those is ~5x faster on typical posts.
_NEEDS_MAP = re.compile("[" + "".join(re.escape(chr(cp)) for cp in sorted(_TABLE)) + "]")
_REPLACE = {chr(cp): (value or "") for cp, value in _TABLE.items()}
# Letters ZWNJ usually sits between (ASCII and Arabic-script letters; all ``str.isalpha``): a ZWNJ with one
# of them on each side, alone, is kept by ``_fix_zwnj`` as it is. Only a text with some other ZWNJ (a run, at
# an end, or next to anything else, other letters included) needs that pass (~0.2 us to rule out, 0.9 to run).
_LETTER = "[A-Za-z" + "".join(chr(cp) for cp in range(0x0600, 0x0780) if chr(cp).isalpha()) + "]"
_ZWNJ_TO_FIX = re.compile(f"{ZWNJ}(?:(?!{_LETTER})|(?<!{_LETTER}{ZWNJ}))")


def clean_text(text: str) -> str:
    """Normalize ``text`` for search and matching (see module docstring for the rules)."""
    if not text:
        return ""
    if text.isascii():  # nothing to map, no ZWNJ or bidi controls: only whitespace to collapse
        return _collapse_whitespace(text)
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    found = _NEEDS_MAP.findall(text)
    if found:
        for char in set(found):
            text = text.replace(char, _REPLACE[char])
    if ZWNJ in text and _ZWNJ_TO_FIX.search(text):
        text = _fix_zwnj(text)
    return _collapse_whitespace(text)


def _collapse_whitespace(text: str) -> str:
    """Whitespace runs as one space, ends stripped. Most texts already are (checked in ~0.6 us, splitting and
    joining costs ~1.3): every whitespace character but the space is unprintable, and so is ZWNJ."""
    if (
        "  " not in text
        and text[:1] != " "
        and text[-1:] != " "
        and (text.replace(ZWNJ, "") if ZWNJ in text else text).isprintable()
    ):
        return text
    return " ".join(text.split())


def _fix_zwnj(text: str) -> str:
    """Keep one ZWNJ only between two letters (e.g. می‌خواهم); runs collapse, stray ones go.

    Splitting on ZWNJ is ~5x faster than a look-around regex (which cannot use a literal prefix)."""
    parts = [p for p in text.split(ZWNJ) if p]
    if not parts:
        return ""
    out = [parts[0]]
    for part in parts[1:]:
        out.append(ZWNJ + part if out[-1][-1].isalpha() and part[0].isalpha() else part)
    return "".join(out)


_FOLDED: dict[str, str] = {}
_FOLDED_MAX = 100_000


def fold_tag(tag: str) -> str:
    """A hashtag or handle as a stable key: without its sigil, cleaned like text, casefolded.

    Tags and handles repeat a lot, so results are memoized (bounded: cleared when full)."""
    folded = _FOLDED.get(tag)
    if folded is None:
        if len(_FOLDED) >= _FOLDED_MAX:
            _FOLDED.clear()
        folded = _FOLDED[tag] = _fold(tag)
    return folded


def _fold(tag: str) -> str:
    tag = tag.strip()
    if tag[:1] in ("#", "@", "＃", "＠"):
        tag = tag[1:]
    return tag.casefold() if tag.isascii() else clean_text(tag).casefold()


def unique(values: list[str]) -> list[str]:
    """Drop empty values and repeats, keeping first-seen order (deterministic output)."""
    if len(values) < 2:  # most posts have one tag, link or mention: no set
        return [values[0]] if values and values[0] else []
    return list(dict.fromkeys(v for v in values if v))
