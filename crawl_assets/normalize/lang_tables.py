"""The tables language identification reads (``normalize/lang.py``): scripts, letters and words of each
language, and the model's candidates; data only, chosen on our own labelled sets (docs/SCHEMA.md, Language)."""

from __future__ import annotations

# Scripts whose letters name one language (Unicode name prefix -> ISO 639-1).
SCRIPT_LANGUAGE = {
    "GREEK": "el", "HEBREW": "he", "ARMENIAN": "hy", "GEORGIAN": "ka", "HANGUL": "ko", "HIRAGANA": "ja",
    "KATAKANA": "ja", "THAI": "th", "LAO": "lo", "KHMER": "km", "MYANMAR": "my", "SINHALA": "si", "TAMIL": "ta",
    "TELUGU": "te", "KANNADA": "kn", "MALAYALAM": "ml", "GUJARATI": "gu", "GURMUKHI": "pa", "BENGALI": "bn",
    "ETHIOPIC": "am", "TIBETAN": "bo", "ORIYA": "or", "CJK": "zh",
}  # fmt: skip

# Words of one language only, spelled with either keyboard's yeh/kaf (Persian typed on an Arabic keyboard
# counts). Words both languages use (ما, هم, من, یا/يا, كل, بعد, جدا, قد, خلاص, والله...) are in neither list,
# nor Arabic-keyboard spellings that are also Arabic words (اين "where", هاي "hi", ولي, كرد, مرسي).
PERSIAN_WORDS = frozenset(
    "است را می نمی که كه اینکه این آن ها های برای براي یک يک يك یا شد شده بود چه شما آنها ولی اگر تا رو همه "
    "خیلی خيلي امروز دیروز ديروز فردا کرد کرده كرده کند كند کنید كنيد شود نیست نيست هست هستم هستی هستيد "
    "هستید باید بايد چرا کجا كجا ممنون ممنونم مرسی کاهش كاهش افزایش افزايش میشه ميشه نمیشه نميشه داره "
    "دارد دارند نداره خواهم خواهد میخواهم ميخواهم میخوام ميخوام بروم برم میرم ميرم نه بله آره خوب بد "
    "باشه بشم البته اون اونجا اینجا اينجا خداحافظ دارم داريد دارید کردم كردم شدم بدید بديد".split()
)
ARABIC_WORDS = frozenset(
    "في على إلى الى هذا هذه التي الذي الذين عن مع كان كانت ذلك لم لن هو هل لماذا كيف ماذا أين شكرا شكراً "
    "لكن حتى انا أنا انت أنت انتم نحن هناك هنا ليس ليش ايش وش مش عشان كتير كثير وين فين زي ازاي كده اوي "
    "عايز منذ اذا لا نعم يلا طيب ايه عم مافي ماكو شلون شلونك هيك هاد بكرا بكره انه اهلا هلا عاجل ازيك ازيكم "
    "عاوز عاوزة عايزة دلوقتي وحشتني وحشتيني بتاعي خالص".split()
)
SHARED_AL = frozenset("الان الآن الو".split())  # words opening with ال that Persian uses too
URDU_WORDS = frozenset("کیا اور آپ کا کو کر کرو گیا گئی دیا چلو بات کوئی نیا نئی دوستو کون بالکل شاندار دن چلی "
                        "جیتا جیت فیصد".split())

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

# Among Russian, Ukrainian and Belarusian when the letters allow several: frequent words of one of them only,
# and Belarusian spellings (дз/ц before a soft vowel where Russian has д/т, шч where the others write щ).
EAST_SLAVIC_WORDS = {
    "ru": frozenset("что это как спасибо пожалуйста где уже очень кто когда тоже нет есть мне тебя сегодня "
                    "здесь можно нужно".split()),
    "uk": frozenset("дякую будь що це як але дуже вже де хто коли теж нема немає мене добрий скільки".split()),
    "be": frozenset("дзякуй што гэта вельмі дзе ёсць няма яшчэ цябе мяне сёння добры калі".split()),
}

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


# Finglish words that are no English word, and colloquial verb forms (``mikham``, ``nemidunam``, ``raftam``)
FINGLISH_WORDS = frozenset("""
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

# Words Finglish uses that English (or French) also writes: Finglish only beside a FINGLISH_WORDS word
FINGLISH_SHARED = frozenset("to man are sham dare film do be ba na ham bad bar merci mersi ke ro ra az dar va tu too "
                            "in on jan pa sar del rah ab gol nan dast sale tatil hala dir baste".split())
# Frequent English words, which a Finglish text's words must outnumber
ENGLISH_WORDS = frozenset("""
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
