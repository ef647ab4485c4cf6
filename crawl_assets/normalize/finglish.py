"""Finglish: Persian written in Latin letters (``salam, chetori?``, ``nemidunam chi begam``), told apart from the
Latin-script languages before the statistical model is asked (it has no Finglish and answers English,
Indonesian or Tagalog). Words of our own listing (docs/SCHEMA.md, Language):

* ``WORDS``: Finglish words that are no English word (greetings, pronouns with endings, frequent nouns,
  adverbs), and verb forms made from colloquial stems: ``mi``/``nemi``/``be``/``na`` + stem + ending
  (``mikham``, ``nemidunam``, ``beram``) and past stems with endings (``raftam``, ``goftim``);
* ``SHARED``: words Finglish uses that English (or French) also writes (``to``, ``man``, ``are``, ``merci``):
  they count for Finglish only beside a ``WORDS`` word.

A text is Finglish when its letters are all ASCII, at least one word is in ``WORDS``, Finglish words make at
least a third of its words, and they outnumber the words of ``ENGLISH`` (frequent English words).
"""

from __future__ import annotations

import re
from typing import Any

_PRESENT = ("kh", "khoa", "r", "g", "d", "sh", "kon", "dun", "doon", "tun", "toon", "bin", "khor", "khun", "khoon",
            "a", "gir", "zan", "res", "pors", "fahm", "nevis", "rav", "gu", "goo", "mun", "moon", "shin", "zar",
            "khar", "kharam", "duz", "pooshi", "kes", "fres", "ferest", "khab", "khaab", "tars", "khand")
_PAST = ("raft", "goft", "kard", "dad", "did", "khord", "khast", "umad", "oomad", "omad", "amad", "shod", "bud",
         "bood", "dasht", "kharid", "gereft", "nevesht", "khund", "khoond", "resid", "porsid", "fahmid", "zad",
         "mund", "moond", "neshast", "shenid", "avord", "ovord", "bord", "sakht", "rikht", "dunest", "doonest",
         "tunest", "toonest", "kheyli")
_PRESENT_ENDINGS = ("am", "i", "e", "im", "in", "an", "ad", "ay", "ym", "yn", "id", "and", "eh")
_PAST_ENDINGS = ("", "am", "i", "e", "im", "in", "an", "and", "id", "eh", "ast")


def _verbs() -> set[str]:
    out: set[str] = set()
    for stem in _PRESENT:
        for prefix in ("mi", "nemi", "be", "bi", "na", "ne"):
            out.update(prefix + stem + e for e in _PRESENT_ENDINGS)
    for stem in _PAST[:-1]:
        for prefix in ("", "na", "ne", "mi", "nemi"):
            out.update(prefix + stem + e for e in _PAST_ENDINGS)
    return out


WORDS = frozenset("""
salam salaam dorood doroud bedrood khodahafez chetori chetorin khubi khoobi khubam khoobam khube khoobe
khub khoob kheili kheyli khili mamnoon mamnun motshakeram mamnunam afarin damet dametoon dametun garm eyval
ghorbonet ghorboonet fadat azizam azizami joonam jooni dooset doosetun delam deltang barat baram barash behem
behet behesh azat azam mano toro ino uno ona ina una inam unam unja onja inja injast unjast kojast koja kojaei
kojaye kojayi chera chi chiye chie chizi chiz hichi hich hamechi hamash hame hamishe hanooz hanuz alan
dige digeh faghat fekr fekram fekr mikonam aslan vali chon agar age inshalla inshallah enshallah khoda
khodaya bebakhshid bebakhshin lotfan ashkal moshkel moshkeli nakone nakon dard vaghean vaghan jeddi bale
baba maman mamanam babam dadash dadasham abji aghaye agha khanoom khanoome khanom khune khoone khooneh
khaneh khunam sobh bekheir bekheyr shab rooz emrooz emruz farda fardaa dirooz diruz emshab dishab hava barf
baroon baroun gheymat gheymatesh geroon geroone gerune arzoon arzun pool pul mashin ghaza chai chaei ghahve
nahar kar karam kari saram sholooghe sholoogh dars emtehan daneshgah madrese ketab khabar khabari chand chande
cheghadr ghashang ghashange aali jaleb ajib bahal tavalodet mobarak eidet norooz nowruz movafaghiat
arezooye gorosnam teshneam khabam khastam khaste nabashid mariz narahat narahatam khoshhal khoshhalam
asabani zood ajale sabr yavash ahesteh ahaste piyade biroon birun berim bia biya boro begoo begu bego
nagoo nagu harf javab soal soali eshkal dorost dorogh doroogh rast hagh ghabool movafegham mokhalefam
bikhial bikhiyal harchi harja har vaght ye yek dobare bazam tamoom tamum shoroo shuru sar rah khordi
khoshmaze ghazaa bastani mive tarsidam khandidam gerye khandam delam sookht hichvaght gahi vaghta pesar
dokhtar khale amu ammeh daei dayi doost dust doostam dustam rafigh javab dadam nadaram nadari nadare nist
nistam nisti hastam hasti hastim hastin hastan hast bashe basham bashi bashim mishe nemishe shode shodam
shodi boodi budi boodam budam mage nagoftam goftam migam migi mige ghablan gofte zang bezan mizanam behet
payam bede tanks mersi dastet sharj gooshim gushim ghate kond net nemiram miam miay miad mian nayoomad
nayumad residam residi rasidam otoboos amade khoshgel zesht bozorg kuchik koochik kuchulu
""".split()) | frozenset(_verbs())

SHARED = frozenset("to man are sham dare film do be ba na ham bad bar merci mersi ke ro ra az dar va tu too "
                   "in on jan pa sar del rah ab gol nan dast sale tatil hala dir baste".split())
ENGLISH = frozenset("""
the a an is are was were be been am i you he she it we they me my your his her our their this that these those
of in on at for with from by to and or but not no yes so if then than as up down out about into over after
before do does did have has had will would can could should may might must what who which when where why
how all any some more most very just only also too much many good great best nice love like thanks thank
please hello hi hey new one two time day today tomorrow people get got go going come make made know think
see want need use app game phone free buy sale price order delivery service update version
""".split())
# Latin-script languages a platform or the model may have named a Finglish text by
LATIN_LANGUAGES = frozenset("en es pt fr de it nl tr pl id in ms vi ro cs sk hu sv da no fi et lv lt sl hr bs sq tl "
                            "sw az uz ca eu gl is mt ga cy la lb ht so yo zu sn".split())
_ASCII_WORDS = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_SPACES = str.maketrans({c: " " for c in ".,!?;:()[]\"…-؟#@/"})


def is_finglish(body: str) -> bool:
    """Whether a Latin-script text is Persian written in Latin letters (see the module docstring)."""
    lowered = body.lower()
    if WORDS.isdisjoint(lowered.translate(_SPACES).split()):  # the common case, an English text: ~1 us
        return False
    if not body.isascii() and not all(c.isascii() for c in body if c.isalpha()):  # emoji are fine, é or ş not
        return False
    words = _ASCII_WORDS.findall(lowered)
    if not words:
        return False
    own = sum(1 for w in words if w in WORDS)
    if own == 0:
        return False
    shared = sum(1 for w in words if w in SHARED and w not in WORDS)
    english = sum(1 for w in words if w in ENGLISH and w not in WORDS and w not in SHARED)
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
