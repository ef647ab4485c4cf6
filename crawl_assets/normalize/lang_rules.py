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

**Finglish**: Persian written in Latin letters (``salam, chetori?``, ``nemidunam chi begam``), told apart from the
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
import unicodedata
from typing import Any


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

# پ چ ژ گ, keheh ک, Farsi yeh ی, ZWNJ: Persian or Urdu, never Arabic
_PERSO_URDU = re.compile(r"[\u067e\u0686\u0698\u06af\u06a9\u06cc\u200c]")
# ة, alef maksura ى, إ anywhere, أ opening a word (Persian writes أ only inside loans: تأثیر, مسأله)
_ARABIC_ONLY = re.compile(r"[\u0629\u0649\u0625]|^\u0623")
# Words of one language only, spelled with either keyboard's yeh/kaf (Persian typed on an Arabic keyboard
# counts). Words both languages use (ما, هم, من, یا/يا, كل, بعد, جدا, قد, خلاص, والله...) are in neither list,
# nor Arabic-keyboard spellings that are also Arabic words (اين "where", هاي "hi", ولي, كرد, مرسي).
_PERSIAN_WORDS = frozenset(
    "است را می نمی که كه اینکه این آن ها های برای براي یک يک يك یا شد شده بود چه شما آنها ولی اگر تا رو همه "
    "خیلی خيلي امروز دیروز ديروز فردا کرد کرده كرده کند كند کنید كنيد شود نیست نيست هست هستم هستی هستيد "
    "هستید باید بايد چرا کجا كجا ممنون ممنونم مرسی کاهش كاهش افزایش افزايش میشه ميشه نمیشه نميشه داره "
    "دارد دارند نداره خواهم خواهد میخواهم ميخواهم میخوام ميخوام بروم برم میرم ميرم نه بله آره خوب بد "
    "باشه بشم البته اون اونجا اینجا اينجا خداحافظ دارم داريد دارید کردم كردم شدم بدید بديد".split()
)
_ARABIC_WORDS = frozenset(
    "في على إلى الى هذا هذه التي الذي الذين عن مع كان كانت ذلك لم لن هو هل لماذا كيف ماذا أين شكرا شكراً "
    "لكن حتى انا أنا انت أنت انتم نحن هناك هنا ليس ليش ايش وش مش عشان كتير كثير وين فين زي ازاي كده اوي "
    "عايز منذ اذا لا نعم يلا طيب ايه عم مافي ماكو شلون شلونك هيك هاد بكرا بكره انه اهلا هلا عاجل ازيك ازيكم "
    "عاوز عاوزة عايزة دلوقتي وحشتني وحشتيني بتاعي خالص".split()
)
_SHARED_AL = frozenset("الان الآن الو".split())  # words opening with ال that Persian uses too
_URDU_WORDS = frozenset("کیا اور آپ کا کو کر کرو گیا گئی دیا چلو بات کوئی نیا نئی دوستو کون بالکل شاندار دن چلی "
                        "جیتا جیت فیصد".split())
_PUNCT = "؟?!.،,:;؛«»\"'()[]…-"
_OWN_LETTERS = (
    ("ur", re.compile(r"[\u0679\u0688\u0691\u06ba\u06c1\u06d2]|(?<=\w)\u06be")),  # ٹ ڈ ڑ ں ہ ے, ھ after a letter
    ("ps", re.compile(r"[\u067c\u0689\u0693\u0696\u069a\u06ab\u06bc]")),  # ټ ډ ړ ږ ښ ګ ڼ
    ("ku", re.compile(r"[\u0695\u06b5\u06c6\u06ce\u06d5]")),  # ڕ ڵ ۆ ێ ە
)

# Cyrillic alphabets of the candidate languages: a text's letters rule out the languages that lack them.
CYRILLIC_ALPHABETS = {
    "ru": "абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
    "uk": "абвгґдеєжзиіїйклмнопрстуфхцчшщьюя",
    "be": "абвгдеёжзійклмнопрстуўфхцчшыьэюя",
    "bg": "абвгдежзийклмнопрстуфхцчшщъьюяѝ",
    "sr": "абвгдђежзијклљмнњопрстћуфхцчџш",
    "mk": "абвгдѓежзѕијклљмнњопрстќуфхцчџшѐѝ",
    "kk": "аәбвгғдеёжзийкқлмнңоөпрстуұүфхһцчшщъыіьэюя",
    "ky": "абвгдеёжзийклмнңоөпрстуүфхцчшщъыьэюя",
    "mn": "абвгдеёжзийклмноөпрстуүфхцчшщъыьэюя",
    "tg": "абвгғдеёжзиӣйкқлмнопрстуӯфхҳчҷшъэюя",
    "tt": "аәбвгдеёжҗзийклмнңоөпрстуүфхһцчшщъыьэюя",
    "ba": "аәбвгғдҙеёжзийкҡлмнңоөпрсҫтуүфхһцчшщъыьэюя",
    "uz": "абвгдеёжзийклмнопрстуфхцчшъэюяўқғҳ",
}
# Turkic languages, Tajik, Serbian (ј љ њ ђ ћ џ) and Macedonian (ѓ ќ ѕ ј љ њ џ) write their own letters in
# nearly every sentence: without one, they are not it.
_MARKED = {lang: set(CYRILLIC_ALPHABETS[lang]) - set(CYRILLIC_ALPHABETS["ru"]) - {"і"}
           for lang in ("kk", "ky", "mn", "tg", "tt", "ba", "uz", "sr", "mk")}
# Bulgarian has no letter of its own but ѝ; its ъ is a vowel (стъпка, България), which Russian never writes
# before a consonant or at a word's end; and words of Bulgarian only. Without either it is not Bulgarian.
_BULGARIAN = re.compile(r"ѝ|ъ(?![еёюя])|(?<![а-яё])(?:ще|съм|сте|какво|защо|благодаря|здравей|здравейте|добре|трябва|"
                        r"нещо|тук|сега|вече|нали|мерси|чао)(?![а-яё])")
# Letters beyond ASCII of the Latin-script candidates (Latin script is shared by many languages: these only
# rule out, the model chooses among the rest). English writes none natively.
LATIN_LETTERS = {
    "en": "", "es": "áéíóúüñ¿¡", "pt": "áâãàçéêíóôõú", "fr": "àâæçéèêëîïôœùûüÿ", "de": "äöüß",
    "it": "àèéìíîòóùú", "nl": "áéíóúàèëïöü", "tr": "çğıöşüâîûİ", "pl": "ąćęłńóśźż", "id": "", "ms": "",
    "vi": "àáâãèéêìíòóôõùúýăđĩũơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ", "ro": "ăâîșşțţ",
    "cs": "áčďéěíňóřšťúůýž", "sk": "áäčďéíĺľňóôŕšťúýž", "hu": "áéíóöőúüű", "sv": "åäöé", "da": "æøåé",
    "no": "æøåéèêóòô", "fi": "äöåšž", "et": "äöõüšž", "lv": "āčēģīķļņšūž", "lt": "ąčęėįšųūž", "sl": "čšžćđ",
    "hr": "čćđšž", "bs": "čćđšž", "sq": "çë", "tl": "ñáéíóú", "sw": "", "az": "çəğıöşüİ", "uz": "ʻ",
    "ca": "àçéèíïòóúüŀ", "eu": "ñü", "gl": "áéíóúñü¿¡", "is": "áéíóúýþæöð", "mt": "ċġħżàèìòù", "ga": "áéíóú",
}  # fmt: skip
_LATIN_EXTRA = re.compile(r"[^\x00-\x7f]")
# Among Russian, Ukrainian and Belarusian when the letters allow several: frequent words of one of them only,
# and Belarusian spellings (дз/ц before a soft vowel where Russian has д/т, шч where the others write щ).
_EAST_SLAVIC_WORDS = {
    "ru": frozenset("что это как спасибо пожалуйста где уже очень кто когда тоже нет есть мне тебя сегодня "
                    "здесь можно нужно".split()),
    "uk": frozenset("дякую будь що це як але дуже вже де хто коли теж нема немає мене добрий скільки".split()),
    "be": frozenset("дзякуй што гэта вельмі дзе ёсць няма яшчэ цябе мяне сёння добры калі".split()),
}
_BELARUSIAN_SPELLING = re.compile(r"дз[еёяюіь]|шч|ў")
# A Latin i typed inside a Cyrillic word is Ukrainian or Belarusian і (keyboards without it).
_LATIN_I = re.compile(r"(?<=[\u0400-\u04ff])[iI]|[iI](?=[\u0400-\u04ff])")


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
    """Persian, Arabic, Urdu, Pashto or Kurdish when distinctive letters or words decide, else None.

    Urdu, Pashto and Sorani by their own letters; then each word votes for the one language it can belong
    to (a letter, a mark or a whole word only that language writes), and the larger vote decides."""
    for lang, letters in _OWN_LETTERS:
        found = len(letters.findall(body))
        if found and found * 50 >= len(body):
            return lang
    votes = {"fa": 0, "ar": 0, "ur": 0, "fa|ur": 0}
    for raw in body.split():
        word = raw.strip(_PUNCT)
        if not word:
            continue
        if word in _URDU_WORDS:
            votes["ur"] += 1
        elif word in _PERSIAN_WORDS:
            votes["fa"] += 1
        elif _PERSO_URDU.search(word):
            votes["fa|ur"] += 1
        elif (word in _ARABIC_WORDS or _ARABIC_ONLY.search(word)
              or (word.startswith("ال") and len(word) > 3 and word not in _SHARED_AL)):
            votes["ar"] += 1
    not_arabic = votes["fa"] + votes["ur"] + votes["fa|ur"]
    if votes["ar"] > not_arabic:
        return "ar"
    if not_arabic > votes["ar"]:
        return "ur" if votes["ur"] > votes["fa"] else "fa"
    return None


def latin_candidates(body: str, candidates: tuple[str, ...]) -> tuple[str, ...]:
    """The ``candidates`` whose alphabet holds the text's letters beyond ASCII (fewest missing): ``ß`` leaves
    German, ``ğ``/``ı`` Turkish and Azerbaijani, ``¿`` Spanish and Galician."""
    extra = [ch for ch in _LATIN_EXTRA.findall(body) if ch in "¿¡" or (ch.isalpha() and unicodedata.name(ch, "").startswith("LATIN"))]
    known = [lang for lang in candidates if lang in LATIN_LETTERS]
    if not extra or not known:
        return candidates
    lower = [ch if ch == "İ" else ch.lower() for ch in extra]
    misses = {lang: sum(ch not in LATIN_LETTERS[lang] for ch in lower) for lang in known}
    fewest = min(misses.values())
    return tuple(lang for lang in known if misses[lang] == fewest)


def cyrillic_candidates(body: str, candidates: tuple[str, ...]) -> tuple[str, ...]:
    """The ``candidates`` whose alphabet holds the text's Cyrillic letters (fewest letters missing), less the
    Turkic languages and Tajik when none of their own letters is written; one left decides the language."""
    letters = [ch for ch in _LATIN_I.sub("і", body).lower() if "\u0400" <= ch <= "\u04ff" and ch.isalpha()]
    known = [lang for lang in candidates if lang in CYRILLIC_ALPHABETS]
    if not letters or not known:
        return candidates
    misses = {lang: sum(ch not in CYRILLIC_ALPHABETS[lang] for ch in letters) for lang in known}
    fewest = min(misses.values())
    kept = tuple(lang for lang in known if misses[lang] == fewest)
    unmarked = tuple(lang for lang in kept if (lang not in _MARKED or _MARKED[lang].intersection(letters))
                     and (lang != "bg" or _BULGARIAN.search(body.lower())))
    kept = unmarked or kept
    slavic = [lang for lang in ("ru", "uk", "be") if lang in kept]
    if len(slavic) > 1:
        votes = dict.fromkeys(slavic, 0)
        for raw in body.lower().split():
            word = raw.strip(_PUNCT)
            if "be" in votes and _BELARUSIAN_SPELLING.search(word):
                votes["be"] += 1
            for lang in slavic:
                votes[lang] += word in _EAST_SLAVIC_WORDS[lang]
        ranked = sorted(votes.items(), key=lambda kv: kv[1], reverse=True)
        if ranked[0][1] > ranked[1][1]:
            return (ranked[0][0],)
    return kept


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
