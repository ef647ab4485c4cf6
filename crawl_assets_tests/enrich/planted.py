"""Planted answers of our own making for the enrichers that find structure: a topic mixture whose topic each
record was drawn from is known (tests use a few hundred records, bench/enrich.py the full size)."""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta, timezone
from typing import Any

from crawl_assets.normalize.text import clean_text

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)

# Nine topics, three per language, each a vocabulary of its own (words written for this project), and each
# language's background words shared by its topics.
TOPICS: dict[str, tuple[str, str]] = {
    "power": ("fa", "برق قطعی خاموشی نیروگاه کنتور ولتاژ ژنراتور سیم‌کشی ترانسفورماتور مصرف پیک تعرفه "
                    "شبکه‌برق فیوز باتری اینورتر لامپ یخچال کولر"),
    "football": ("fa", "فوتبال دروازه‌بان پنالتی داور استقلال پرسپولیس لیگ هافبک مهاجم گل‌زن ورزشگاه "
                       "سرمربی تماشاگر جام قهرمانی کرنر آفساید هواداران"),
    "prices": ("fa", "قیمت دلار تورم گرانی اجاره مسکن بنزین یارانه حقوق دستمزد بورس سکه طلا "
                     "خرید فروش بازار بانک وام"),
    "weather": ("en", "rain storm forecast flood snow thunder humidity temperature celsius wind hurricane "
                      "drought heatwave umbrella cloudy sunny frost hail"),
    "gaming": ("en", "console controller multiplayer level boss quest patch server lag tournament esports "
                     "stream twitch headset keyboard fps respawn loot"),
    "cooking": ("en", "recipe oven flour butter garlic onion simmer bake dough sauce pepper spice "
                      "kitchen dinner breakfast soup salad grill"),
    "health": ("ar", "مستشفى طبيب دواء لقاح مريض علاج صيدلية عيادة ممرضة جراحة فيروس حمى "
                     "صحة تطعيم وباء ضغط سكري"),
    "travel": ("ar", "سفر طيران فندق مطار تذكرة حجز رحلة جواز تأشيرة سياحة شاطئ حقيبة "
                     "قطار ميناء جزيرة متحف خريطة"),
    "school": ("ar", "مدرسة طالب معلم امتحان درجة فصل منهج واجب كتاب جامعة محاضرة تخرج "
                     "شهادة مكتبة دراسة قلم سبورة"),
}
BACKGROUND = {
    "fa": "مردم خیلی واقعا دوست گفت شهر خانه کار زندگی وقت حرف خبر دیدم".split(),
    "en": "people really good think city home work life time news saw friend".split(),
    "ar": "الناس جدا اليوم المدينة البيت العمل الحياة الوقت الأخبار صديق رأيت قال".split(),
}
PERSIAN_PLURAL = "ها"


def topic_records(per_topic: int, *, seed: int = 35, tenant: str = "acme", platform: str = "x",
                  start: int = 0, words: tuple[int, int] = (8, 16)) -> tuple[list[dict[str, Any]], list[str]]:
    """``per_topic`` records of each planted topic, shuffled, and each record's topic: ~70% of a record's words
    from its topic (some Persian ones in the plural, some English ones with -s), ~20% its language's background
    words, ~10% words of another topic of its language."""
    rng = random.Random(seed)
    vocab = {name: words_.split() for name, (_, words_) in TOPICS.items()}
    by_lang: dict[str, list[str]] = {}
    for name, (lang, _) in TOPICS.items():
        by_lang.setdefault(lang, []).append(name)
    planned = [name for name in TOPICS for _ in range(per_topic)]
    rng.shuffle(planned)
    rows, truth = [], []
    for i, name in enumerate(planned, start=start):
        lang = TOPICS[name][0]
        others = [t for t in by_lang[lang] if t != name]
        out = []
        for _ in range(rng.randint(*words)):
            roll = rng.random()
            if roll < 0.7:
                word = rng.choice(vocab[name])
                if lang == "fa" and rng.random() < 0.2:
                    word += PERSIAN_PLURAL
                elif lang == "en" and rng.random() < 0.2:
                    word += "s"
            elif roll < 0.9:
                word = rng.choice(BACKGROUND[lang])
            else:
                word = rng.choice(vocab[rng.choice(others)])
            out.append(word)
        text = " ".join(out)
        at = T0 + timedelta(minutes=37 * i)
        rows.append({"key": f"{platform}:{i}", "platform": platform, "tenant": tenant,
                     "source": f"{tenant}.{platform}.main", "kind": "post", "native_id": str(i),
                     "author_id": f"u{i % 50}", "created_at": at.isoformat().replace("+00:00", "Z"), "lang": lang,
                     "text": text, "text_clean": clean_text(text), "hashtags": [],
                     "provenance": {"collected_at": (at + timedelta(hours=1)).isoformat().replace("+00:00", "Z"),
                                    "method": "api"}})
        truth.append(name)
    return rows, truth


# -- entities: sentences written for this project with their entities marked ---------------------------
# Slots: {PER} {ORG} {LOC}, and {LOC_HEAD} (a place after a head noun such as شهر / مدينة: only the name is
# the entity). Names mix what the rules know (gazetteer, cue words, given names) and what they cannot (a
# person or place named without any cue, an organization outside the gazetteer): the figures are honest
# about both.
ENTITY_TEMPLATES = {
    "en": ["Dr {PER} visited {LOC} on Monday to meet the team.", "{PER} said the new plan will help farmers.",
           "Yesterday {ORG} announced layoffs in {LOC}.", "Prices in {LOC} rose again, according to {ORG}.",
           "I met {PER} at the airport, what a day", "The {ORG} office in {LOC} is closed today.",
           "Minister {PER} arrived in {LOC} for talks with {ORG}.", "who cares about apple prices at the market today",
           "Great match tonight, the fans were amazing", "Our team moved to {LOC} last year and joined {ORG}.",
           "Thanks {PER} for the quick reply!", "Flights from {LOC} to {LOC} are delayed again."],
    "fa": ["دکتر {PER} امروز به {LOC} سفر کرد.", "{ORG} اعلام کرد که قیمت‌ها در {LOC} بالا رفته است.",
           "آقای {PER} از {ORG} استعفا داد.", "دیروز با {PER} در {LOC} صحبت کردم.",
           "قطعی برق در شهر {LOC_HEAD} ادامه دارد.", "کارمندان {ORG} در {LOC} تجمع کردند.",
           "خانم {PER} گفت که {ORG} کمک می‌کند.", "هوا امروز خیلی سرد است و برف می‌بارد.",
           "قیمت سیب و پرتقال در بازار بالا رفت.", "{PER} در {LOC} سخنرانی کرد.",
           "پرواز {LOC} به {LOC} باز هم تاخیر دارد.", "از پشتیبانی {ORG} ممنونم."],
    "ar": ["قال الدكتور {PER} إن الوضع في {LOC} مستقر.", "أعلنت {ORG} عن مساعدات جديدة إلى {LOC}.",
           "التقيت {PER} في {LOC} أمس.", "وصل الوزير {PER} إلى {LOC} لإجراء محادثات مع {ORG}.",
           "ارتفعت الأسعار في مدينة {LOC_HEAD} هذا الأسبوع.", "موظفو {ORG} في {LOC} ينتظرون الرواتب.",
           "الطقس حار جدا اليوم والرطوبة عالية.", "{PER} يكتب عن الاقتصاد كل أسبوع.",
           "شكرا على الخدمة الرائعة", "زار الشيخ {PER} مقر {ORG} صباح اليوم.",
           "الرحلات من {LOC} إلى {LOC} متأخرة.", "نشكر {ORG} على الدعم."],
}
ENTITY_NAMES = {
    "en": {"PER": ["Sarah Connor", "John Miller", "Maria Lopez", "David Chen", "Emma Stone", "Kwame Mensah",
                   "Priya Raman", "Lars Eriksson", "Helen Park", "Tom Baker", "Omar Haddad", "Anna Kowalski"],
           "ORG": ["United Nations", "Google", "Reuters", "World Bank", "NATO", "Samsung", "Acme Corp",
                   "Northwind Bank", "University of Toronto", "Ministry of Health", "Greenpeace", "Oxfam"],
           "LOC": ["Tehran", "Cairo", "London", "Baghdad", "New York", "Germany", "Dubai", "Kerman Province",
                   "Nairobi", "Lima", "Oslo", "Fifth Avenue"]},
    "fa": {"PER": ["علی رضایی", "مریم احمدی", "حسین کریمی", "سارا محمدی", "نیما صادقی", "رحیم پورمند",
                   "کامران نوری", "فاطمه حسینی", "بهروز وثوقی", "شیرین عبادی"],
           "ORG": ["سازمان ملل", "بانک مرکزی", "دیجی‌کالا", "ایرانسل", "یونیسف", "شرکت نفت", "وزارت نیرو",
                   "دانشگاه شریف", "بانک ملت", "تپسی", "کافه‌بازار"],
           "LOC": ["تهران", "اصفهان", "مشهد", "کابل", "آلمان", "ترکیه", "شیراز", "نیشابور", "سبزوار", "گرگان"],
           "LOC_HEAD": ["رشت", "گرگان", "زنجان", "تهران", "بم"]},
    "ar": {"PER": ["خالد العمري", "فاطمة الزهراني", "أحمد منصور", "سارة حداد", "يوسف القاسم", "نادر السويدي",
                   "ريم الشامي", "عمر الفاروق", "هدى العلي", "منى يوسف"],
           "ORG": ["الأمم المتحدة", "منظمة الصحة العالمية", "البنك الدولي", "جامعة الدول العربية", "أرامكو",
                   "وزارة الصحة", "شركة الاتصالات", "جامعة دمشق", "بنك مسقط", "طلعت مصطفى"],
           "LOC": ["بغداد", "القاهرة", "دبي", "الرياض", "بيروت", "العراق", "مصر", "صلالة", "حمص", "طنطا"],
           "LOC_HEAD": ["حمص", "الموصل", "صلالة", "جدة", "طنطا"]},
}


def entity_sentences(per_language: int, *, seed: int = 35) -> list[tuple[str, str, list[tuple[int, int, str]]]]:
    """``per_language`` sentences of each language: (language, text as ``text_clean`` has it, the planted
    entities as (start, end, type) in code points)."""
    rng = random.Random(seed)
    out = []
    for lang, templates in ENTITY_TEMPLATES.items():
        for n in range(per_language):
            template = templates[n % len(templates)]
            text, gold = "", []
            for piece in re.split(r"(\{[A-Z_]+\})", template):
                if piece.startswith("{"):
                    slot = piece[1:-1]
                    value = clean_text(rng.choice(ENTITY_NAMES[lang][slot]))
                    gold.append((len(text), len(text) + len(value), slot.split("_")[0]))
                    text += value
                elif piece:  # the letter forms text_clean gives, the spaces around kept
                    lead, trail = piece[:len(piece) - len(piece.lstrip())], piece[len(piece.rstrip()):]
                    text += lead + clean_text(piece) + trail if piece.strip() else piece
            out.append((lang, text, gold))
    return out
