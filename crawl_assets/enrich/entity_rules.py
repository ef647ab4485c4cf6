"""The rules of the entities enricher, as data: the gazetteer file, cue words before or after a name, given
names. Written for this project (Persian, Arabic, English); every word is folded as ``text_clean`` folds
text (ي -> ی, ك -> ک, no diacritics) when loaded, so the rules meet the text in one form.

A cue says what follows (or precedes) it: a title before a person (Dr, آقای, الدكتور), a head noun that
starts an organization's or a place's name (University of, دانشگاه, جامعة; شهر, مدينة), an organization
suffix (Inc, Bank). ``KEEP_HEAD``: head nouns that are part of the name (دانشگاه تهران is the
university's name; in شهر رشت only رشت is the place's).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from crawl_assets.enrich.stopwords import ARABIC, ENGLISH, PERSIAN
from crawl_assets.normalize.text import clean_text

GAZETTEER = Path(__file__).parent / "gazetteer" / "entities.tsv"
TYPES = ("PER", "ORG", "LOC")


def fold(word: str) -> str:
    """A word or name as rules compare it: ``text_clean``'s letter forms, casefolded, ZWNJ as nothing."""
    return clean_text(word).casefold().replace("\u200c", "")


def _words(text: str) -> frozenset[str]:
    return frozenset(fold(w) for w in text.split())


# -- titles before a person's name (the title is not part of the span) -------------------------------------
PERSON_TITLES = {
    "en": _words("Mr Mrs Ms Miss Dr Prof Professor President Minister Senator Governor Mayor Judge General Sheikh "
                 "Imam Ayatollah Sir Lady Colonel Captain Coach CEO Ambassador"),
    "fa": _words("آقای خانم دکتر مهندس استاد سردار سرلشکر سرتیپ آیت‌الله حجت‌الاسلام حاج حاجی سرکار "
                 "رئیس‌جمهور شهید"),
    "ar": _words("السيد السيدة الدكتور الدكتورة الشيخ الرئيس الوزير الأمير الملك المهندس الأستاذ الأستاذة "
                 "اللواء العميد الإمام الحاج النائب"),
}
# -- head nouns that start an organization's name ------------------------------------------------------------
ORG_HEADS = {
    "en": _words("University Ministry Department Bank Bureau Agency Council Party Union Association Institute "
                 "Foundation Committee Commission Hospital Academy College"),
    "fa": _words("شرکت سازمان دانشگاه وزارت بانک حزب انجمن شورای مجلس خبرگزاری بیمارستان دانشکده اداره ستاد "
                 "کمیته بنیاد صندوق باشگاه روزنامه هواپیمایی گروه اتحادیه سندیکای کانون"),
    "ar": _words("شركة منظمة جامعة وزارة بنك حزب جمعية مجلس وكالة مستشفى هيئة مؤسسة نادي صحيفة اتحاد "
                 "نقابة كلية معهد"),
}
# -- suffixes that end an organization's name (English: Capitalized words before them) ----------------------
ORG_SUFFIXES = _words("Inc Corp Corporation Ltd LLC Co Company Group Bank Airlines Airways Motors Telecom Media "
                      "News University Institute Foundation Association Hospital FC Club Party Council")
# -- head nouns before a place's name ------------------------------------------------------------------------
PLACE_HEADS = {
    "en": _words(""),
    "fa": _words("شهر استان روستای روستا کشور جزیره خیابان میدان بندر دریای رود کوه شهرستان منطقه"),
    "ar": _words("مدينة محافظة قرية دولة جزيرة شارع ميدان بحر نهر جبل منطقة ولاية"),
}
KEEP_HEAD = _words("خیابان میدان بندر دریای رود کوه شارع ميدان بحر نهر جبل")
# -- English: Capitalized words before these are a place ----------------------------------------------------
PLACE_SUFFIXES = _words("City Province County Street Avenue Square River Lake Mountains Island Bay Valley")
# -- verbs after a person in English reports ("Sara Connor said") ------------------------------------------
SAID = _words("said says told wrote announced tweeted posted asked added replied")
# -- given names: a given name and the next word are a person (Latin script: the next word Capitalized) ------
GIVEN_NAMES = {
    "en": _words("John James Robert Michael William David Richard Joseph Thomas Charles Mary Patricia Jennifer "
                 "Linda Elizabeth Barbara Susan Jessica Sarah Karen Emma Olivia Daniel Matthew Anthony Mark "
                 "Paul Steven Andrew Kevin Brian George Emily Anna Laura Rachel Peter Tom Alice Maria"),
    "fa": _words("علی محمد حسین حسن رضا مهدی امیر سعید مجید حمید احمد مصطفی جواد کاظم ابراهیم اکبر "
                 "فاطمه زهرا مریم زینب سارا نرگس لیلا مینا شیرین نازنین پریسا الهام سمیرا نسرین "
                 "بهروز فرهاد کیوان آرش بابک داریوش کوروش سیاوش نیما پویا مهسا آزاده شهرام"),
    "ar": _words("محمد أحمد علي حسن حسين خالد عمر يوسف إبراهيم عبدالله عبد مصطفى سعيد طارق سامي كريم "
                 "فاطمة عائشة مريم زينب نور ليلى سارة هدى رنا دينا سلمى ياسمين منى"),
}
# -- Arabic function words that fold like a given name (على -> علی, as علي): in Arabic text, no name word --
ARABIC_FUNCTION_FOLDS = _words("على")
# -- words that end a name found by a cue (a name never runs into them) -------------------------------------
NAME_STOPS = _words(
    "و که را از به با در برای تا این آن هم یا اما گفت گفته کرد کرده است بود شد می نیز امروز دیروز "
    "و في من إلى عن مع هذا هذه ذلك قال قالت أن إن كان اليوم أمس الذي التي "
    "and the of in on at to for with from by said says is was today yesterday " + " ".join(ENGLISH + PERSIAN + ARABIC)
) - _words("على")  # (folds like the name علی: see ARABIC_FUNCTION_FOLDS)


@dataclass(frozen=True)
class Entry:
    id: str
    type: str
    name: str  # as written in the gazetteer
    latin: bool  # Latin script: matched only with each word Capitalized (or as written, for an acronym)


@lru_cache(maxsize=1)
def gazetteer() -> dict[tuple[str, ...], Entry]:
    """Folded word sequence -> entry, every name of every language of ``GAZETTEER``."""
    out: dict[tuple[str, ...], Entry] = {}
    with open(GAZETTEER, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if row["type"] not in TYPES:
                raise ValueError(f"{GAZETTEER}: {row['id']}: unknown type {row['type']!r}")
            for lang in ("en", "fa", "ar"):
                for name in filter(None, (row[lang] or "").split("|")):
                    words = tuple(fold(w) for w in clean_text(name).replace("\u200c", "").split())
                    out.setdefault(words, Entry(row["id"], row["type"], name, lang == "en"))
    return out


@lru_cache(maxsize=1)
def longest_name() -> int:
    return max(len(k) for k in gazetteer())


@lru_cache(maxsize=1)
def first_words() -> frozenset[str]:
    """The first word of every gazetteer name (a word that starts none is skipped at once)."""
    return frozenset(k[0] for k in gazetteer())
