"""A labelled language-identification set of our own writing (no corpus copied): short social and feedback
texts (at most 120 characters) in English, Persian, Arabic, Russian, Turkish, Urdu, French, German and
Spanish, plus mixed-script, emoji-heavy, very short and textless ones.

Files: ``{lang}.txt`` hold one text of that language per line; ``mixed.txt``, ``emoji.txt``, ``brief.txt``
and ``short.txt`` hold ``expected<TAB>text`` lines (``-`` expects no language: too little text).
Read by ``bench/lang_eval.py`` and ``crawl_assets_tests/normalize/test_lang_eval.py``.

``load_short`` reads the short-text sets of ``bench/lang_short/`` (3 to 40 letters, one text of the file's
language a line): even lines are the calibration half (thresholds are chosen on it), odd lines the test half.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
LANGUAGES = ("en", "fa", "ar", "ru", "tr", "ur", "fr", "de", "es")
LABELLED = ("mixed", "emoji", "brief", "short")
SHORT_DIR = HERE.parents[2] / "bench" / "lang_short"
SHORT_LANGUAGES = ("fa", "ar", "en", "uk", "ru", "be", "tr", "ur", "de", "fr", "es")


@dataclass(frozen=True)
class Sample:
    expected: str | None  # ISO 639-1, or None for "too little text"
    text: str
    group: str  # the file it comes from: a language code, or one of LABELLED

    @property
    def letters(self) -> int:
        return sum(1 for ch in self.text if ch.isalpha())


def load() -> list[Sample]:
    """Every sample, in file order."""
    samples: list[Sample] = []
    for lang in LANGUAGES:
        for line in (HERE / f"{lang}.txt").read_text(encoding="utf-8").splitlines():
            if line.strip():
                samples.append(Sample(lang, line, lang))
    for group in LABELLED:
        for line in (HERE / f"{group}.txt").read_text(encoding="utf-8").splitlines():
            if line.strip():
                expected, text = line.split("\t", 1)
                samples.append(Sample(None if expected == "-" else expected, text, group))
    return samples


def load_short(half: str | None = None) -> list[Sample]:
    """The short-text sets (group ``calibration`` or ``test``), or one ``half`` of them."""
    return [s for lang in SHORT_LANGUAGES for s in _halves(lang, lang, half)]


def _halves(name: str, lang: str, half: str | None) -> list[Sample]:
    """The lines of ``bench/lang_short/{name}.txt`` as samples of ``lang``: even lines the calibration half."""
    lines = [line for line in (SHORT_DIR / f"{name}.txt").read_text(encoding="utf-8").splitlines() if line.strip()]
    groups = ((line, "calibration" if index % 2 == 0 else "test") for index, line in enumerate(lines))
    return [Sample(lang, line, group) for line, group in groups if half is None or half == group]


FINGLISH_AGAINST = ("en", "tr", "de", "fr", "es")  # the Latin-script languages of the short sets


def load_finglish(half: str | None = None) -> list[Sample]:
    """Finglish (``bench/lang_short/fa-Latn.txt``, expected ``fa``) and the Latin-script short sets it must be
    told from, in halves like ``load_short``; a sample's group is its half."""
    return [s for name, lang in (("fa-Latn", "fa"), *((x, x) for x in FINGLISH_AGAINST)) for s in _halves(name, lang, half)]
