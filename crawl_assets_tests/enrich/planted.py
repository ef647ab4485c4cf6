"""Planted answers of our own making for the enrichers that find structure: a topic mixture whose topic each
record was drawn from is known (tests use a few hundred records, bench/enrich.py the full size)."""

from __future__ import annotations

import random
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
