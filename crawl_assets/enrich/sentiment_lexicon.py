"""Lexicon features for the shipped sentiment model: polarity words (Persian, Arabic, English), negation with
its scope, emoji and sarcasm markers, counted per text. Written for this project; words in ``text_clean``'s
letter forms (ی, ک), matched on word starts for Persian and Arabic (خوبه, خوبی start with خوب; a word
with an Arabic article ال is matched without it).

Negation: an English or Arabic negator (not, never, no, n't; لا لم لن ليس ما غير) flips the polarity of the
next three words; a Persian negated copula or verb (نیست, نبود, نشد, نمی‌..., نداره) flips the polarity word
just before it or is negative on its own when none is there, and a Persian verb in the negative (starting with
ن before a known verb stem: نمی‌کنه, نکرد) counts as negated. Sarcasm: a marker (/s, 🙄, 🙃, 😒, yeah right,
چه عالی, آره جون خودت, يا سلام, ...) together with any negative word or negated positive marks the praise
around it as ironic.

``LexiconFeatures`` is a scikit-learn transformer (no fitted state) giving, per text: positive and negative
word counts after negation, negated positives, negated negatives, positive and negative emoji, sarcasm
markers, ironic praise, a question mark, an exclamation mark.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from crawl_assets.normalize.text import clean_text

FEATURES = ("positive", "negative", "negated_positive", "negated_negative", "positive_emoji", "negative_emoji",
            "sarcasm_marker", "ironic_praise", "question", "exclamation")


def _fold(words: str) -> frozenset[str]:
    return frozenset(clean_text(w).casefold().replace("\u200c", "") for w in words.split())


POSITIVE = _fold("""
good great excellent amazing awesome wonderful fantastic perfect perfectly love loved like liked best better nice
happy glad pleased smooth fast quick reliable helpful beautiful brilliant superb impressive recommend enjoy enjoyed
easy worth thanks thank top clean pleasant satisfied stunning delightful fine solid flawless
خوب عالی عالیه عالیست فوق‌العاده بی‌نظیر محشر معرکه قشنگ زیبا سریع روان راحت ممنون مرسی سپاس دوست راضی
قابل‌اعتماد کمک درجه خوشحال لذت بهتر بهترین ارزش شیک تمیز دلنشین حرفه‌ای پیشنهاد خوشم دمتون
جيد جيدا رائع ممتاز مذهل جميل سريع سلس موثوق سهل شكرا أحب احب أحببت افضل أفضل مفيد ساعد سعيد راض
مدهش أنيق يستحق مريح سارة أسعد القمة الأولى ممتع
""")
NEGATIVE = _fold("""
bad terrible awful horrible worst worse hate hated slow broken useless crash crashes crashing crashed bug bugs buggy
rude waste disappointing disappointed mess annoying frustrating unbearable overpriced expensive freezes frozen fail
failed fails poor problem problems ruined ugly angry sad lost lose never refund scam late delay delayed wasted
down error charged deleted logs
بد افتضاح افتضاحه کند خراب داغون وحشتناک ناامید مشکل باگ هنگ کرش گرون گران بی‌کیفیت بی‌ادب اعصاب
غیرقابل تحمل بدترین خسته دیر گم قطع هدر پاک متاسف ضعیف زشت بدم نارضایتی کلاهبرداری
سيء سيئ فظيع مريع بطيء معطل عديم مضيعة وقح مخيب فوضى مزعج محبط الأسوأ أسوأ يتوقف يتجمد تعطل أخطاء
خطأ مشكلة غالي أفسد ضاع أضاع متأخر تأخير حذف خصم متوقف يطاق
""")
ENGLISH_NEGATORS = _fold("not no never nothing nobody none cannot dont doesnt didnt isnt wasnt arent wont cant "
                         "hasnt havent shouldnt couldnt neither nor without")
ARABIC_NEGATORS = _fold("لا لم لن ليس ليست لست ما غير بدون ولا")
PERSIAN_NEGATED = _fold("نیست نیستم نبود نشد نشده نداره ندارد نکرد نکرده نمیشه نمیشود هیچ اصلا نه")
PERSIAN_VERB_STEMS = ("می", "کرد", "کن", "شد", "شو", "دار", "بود", "خور", "رس", "ده", "داد", "باش")
POSITIVE_EMOJI = frozenset("😍👍🎉❤😊🙌👏🔥💯🥰😁😀🤩💖✨🌹")
NEGATIVE_EMOJI = frozenset("😡👎😞💔😤😠😢🤬😭😩😫🤮😣")
SARCASM_EMOJI = frozenset("🙄🙃😒")
SARCASM_PHRASES = tuple(clean_text(p).casefold().replace("\u200c", "") for p in (
    "/s", "yeah right", "oh sure", "oh great", "what a surprise", "just brilliant", "thanks a lot", "love how",
    "چه عالی", "آره جون خودت", "دستتون درد نکنه", "واقعا که", "به به", "چه سورپرایزی", "دمتون گرم",
    "يا سلام", "يا للمفاجأة", "ما شاء الله", "برافو", "أكيد،", "شكرا جزيلا"))
_WORD = re.compile(r"[\w\u200c']+")
_ARABIC_SCRIPT = re.compile(r"[\u0600-\u06ff]")


def _polarity(word: str) -> int:
    """+1, -1 or 0 for one folded word (Arabic-script words also by their start and without ال)."""
    for candidate in (word, word[2:] if word.startswith("ال") and len(word) > 4 else None):
        if candidate is None:
            continue
        if candidate in POSITIVE:
            return 1
        if candidate in NEGATIVE:
            return -1
        if _ARABIC_SCRIPT.match(candidate) and len(candidate) >= 4:
            for n in range(len(candidate) - 1, 2, -1):
                if candidate[:n] in POSITIVE:
                    return 1
                if candidate[:n] in NEGATIVE:
                    return -1
    return 0


def _persian_negated_verb(word: str) -> bool:
    return word.startswith("ن") and not word.startswith("نه") and word[1:].startswith(PERSIAN_VERB_STEMS) \
        and len(word) >= 4


def features(text: str) -> list[float]:
    """The ``FEATURES`` of one text."""
    folded = clean_text(text).casefold()
    words = [w.replace("\u200c", "").replace("'", "") for w in _WORD.findall(folded)]
    out = dict.fromkeys(FEATURES, 0.0)
    flip_left = 0
    polarity = [_polarity(w) for w in words]
    for i, word in enumerate(words):
        if word in ENGLISH_NEGATORS or word in ARABIC_NEGATORS:
            flip_left = 3
            continue
        value = polarity[i]
        persian_negation = word in PERSIAN_NEGATED or _persian_negated_verb(word)
        if persian_negation:
            before = polarity[i - 1] if i else 0
            if before:  # خوب نیست: the word before is negated (it was counted: move it)
                out["positive" if before > 0 else "negative"] -= 1
                out["negated_positive" if before > 0 else "negated_negative"] += 1
            elif value == 0:
                out["negated_positive"] += 0.5  # a negated verb alone leans negative (کار نمی‌کنه)
            continue
        if value and flip_left:
            out["negated_positive" if value > 0 else "negated_negative"] += 1
        elif value:
            out["positive" if value > 0 else "negative"] += 1
        flip_left = max(flip_left - 1, 0)
    chars = set(text)
    out["positive_emoji"] = float(sum(text.count(e) for e in POSITIVE_EMOJI & chars))
    out["negative_emoji"] = float(sum(text.count(e) for e in NEGATIVE_EMOJI & chars))
    compact = folded.replace("\u200c", "")
    marker = sum(text.count(e) for e in SARCASM_EMOJI & chars) + sum(compact.count(p) for p in SARCASM_PHRASES)
    out["sarcasm_marker"] = float(marker)
    if marker and (out["negative"] or out["negated_positive"]) and out["positive"]:
        out["ironic_praise"] = 1.0
    out["question"] = float("?" in text or "؟" in text)
    out["exclamation"] = float("!" in text)
    return [out[name] for name in FEATURES]


class LexiconFeatures:
    """A stateless scikit-learn transformer: texts -> the ``FEATURES`` of each (a dense float matrix)."""

    def fit(self, texts: Iterable[str], y: object = None) -> "LexiconFeatures":
        return self

    def transform(self, texts: Iterable[str]) -> np.ndarray:
        return np.array([features(t or "") for t in texts], dtype=np.float64).reshape(-1, len(FEATURES))

    def fit_transform(self, texts: Iterable[str], y: object = None) -> np.ndarray:
        return self.transform(texts)

    def get_params(self, deep: bool = True) -> dict:
        return {}

    def set_params(self, **params: object) -> "LexiconFeatures":
        return self
