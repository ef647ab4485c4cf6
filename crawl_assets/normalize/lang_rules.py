"""What the letters alone say about a short text's language, before any statistical model is asked.

- **Scripts.** Many scripts belong to one language among those users see (Greek, Hebrew, Hangul, kana,
  Thai, Georgian...): the script decides. A text mixing scripts is in its non-Latin script when that
  script holds at least ``HOST_SHARE`` of the letters: Latin brand and place names (``iPhone``,
  ``Real Madrid``) sit inside Persian or Russian sentences far more often than the other way round.
- **Persian vs Arabic.** Generic models confuse short Persian and Arabic. Letters that exist in Persian
  but not in Arabic (پ چ ژ گ, keheh ک, Farsi yeh ی), Arabic-only marks (ة أ إ, the article ال) and
  frequent function words of each language decide first; Arabic yeh/kaf (ي ك) only say "typed on an
  Arabic keyboard", which many Persian writers use, so they decide nothing. Urdu, Pashto and Sorani are
  told by their own letters. Detection must run on the raw text: ``text_clean`` maps Arabic letters to
  Persian ones and would erase the signal.
"""

from __future__ import annotations

import re
import unicodedata

HOST_SHARE = 0.35

_ARABIC_SCRIPT = re.compile(r"[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff]")
_CYRILLIC = re.compile(r"[\u0400-\u052f\u1c80-\u1c8f\u2de0-\u2dff\ua640-\ua69f]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")
# Scripts whose letters name one language (Unicode name prefix -> ISO 639-1).
SCRIPT_LANGUAGE = {
    "GREEK": "el", "HEBREW": "he", "ARMENIAN": "hy", "GEORGIAN": "ka", "HANGUL": "ko", "HIRAGANA": "ja",
    "KATAKANA": "ja", "THAI": "th", "LAO": "lo", "KHMER": "km", "MYANMAR": "my", "SINHALA": "si", "TAMIL": "ta",
    "TELUGU": "te", "KANNADA": "kn", "MALAYALAM": "ml", "GUJARATI": "gu", "GURMUKHI": "pa", "BENGALI": "bn",
    "ETHIOPIC": "am", "TIBETAN": "bo", "ORIYA": "or", "CJK": "zh",
}  # fmt: skip

_PERSIAN_ONLY = re.compile(r"[\u067e\u0686\u0698\u06af\u06a9\u06cc]")  # پ چ ژ گ, keheh ک, Farsi yeh ی
_ARABIC_ONLY = re.compile(r"[\u0629\u0623\u0625]|(?<!\w)ال")  # ة أ إ and the article al-
# Frequent words, spelled with both keyboards' yeh/kaf (so Persian typed on an Arabic keyboard counts).
_PERSIAN_WORDS = frozenset(
    "است را می نمی که كه این اين آن ها های هاي برای براي یک يک يك یا شد شده بود هم چه اینکه ما شما آنها "
    "ولی ولي اگر تا رو همه خیلی خيلي امروز دیروز ديروز فردا کرد كرد کرده كرده کند كند کنید كنيد شود "
    "نیست نيست هست باید بايد چرا کجا كجا ممنون ممنونم مرسی مرسي کاهش كاهش افزایش افزايش میشه ميشه "
    "نمیشه نميشه داره دارد دارند خواهم خواهد میخواهم ميخواهم میخوام ميخوام بروم برم میرم ميرم".split()
)
_ARABIC_WORDS = frozenset(
    "في على إلى الى هذا هذه التي الذي الذين عن مع كان كانت ذلك لم لن قد هو هي هل لماذا كيف ماذا أين "
    "جدا جداً شكرا شكراً لكن حتى".split()
)
_OWN_LETTERS = (
    ("ur", re.compile(r"[\u0679\u0688\u0691\u06ba\u06be\u06c1\u06d2]")),  # ٹ ڈ ڑ ں ھ ہ ے
    ("ps", re.compile(r"[\u067c\u0689\u0693\u0696\u069a\u06ab\u06bc]")),  # ټ ډ ړ ږ ښ ګ ڼ
    ("ku", re.compile(r"[\u0695\u06b5\u06c6\u06ce\u06d5]")),  # ڕ ڵ ۆ ێ ە
)


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
    """Persian, Arabic, Urdu, Pashto or Kurdish when distinctive letters or words decide, else None."""
    for lang, letters in _OWN_LETTERS:
        found = len(letters.findall(body))
        if found and found * 50 >= len(body):
            return lang
    words = body.split()
    persian = 2 * len(_PERSIAN_ONLY.findall(body)) + 2 * sum(1 for w in words if w.strip("؟?!.،,:") in _PERSIAN_WORDS)
    arabic = 2 * len(_ARABIC_ONLY.findall(body)) + 2 * sum(1 for w in words if w.strip("؟?!.،,:") in _ARABIC_WORDS)
    if persian > arabic:
        return "fa"
    if arabic > persian:
        return "ar"
    return None
