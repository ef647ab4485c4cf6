"""bench/api.py's generated records, and the words its searches look for.

Text: 12 words per record drawn from a 20,000-word vocabulary with Zipf frequencies (s = 1: the word of rank
r is in about 1.1 / r of the records), as natural text is. The first ranks are real Persian and English words
(خبر, بازار, تهران, market, ...), the rest pseudo-words of Persian or Latin letters. An earlier generator drew
every word from the 12 real words alone, so any word was in about 65% of the records and a two-word search
scored about half of the index (300 ms of Elasticsearch CPU per search at 200k records): a scan, not the
search a researcher makes. ``text_clean`` is the same words (the cleaned text of a record is its text).

The searches (``search_words``) are what a researcher types: one word of rank 20-500 (in 0.2-6% of the
records), or a frequent word (rank 3-12) AND a word of rank 20-200 (in about 0.1-0.5%).
"""

from __future__ import annotations

import itertools
import random
from datetime import datetime, timedelta, timezone
from functools import lru_cache

TENANT = "bench"
WORDS = ["خبر", "بازار", "دانش\u200cآموزان", "تهران", "اقتصاد", "گزارش", "market", "report", "news", "سلام", "دنیا", "امروز"]
TAGS = ["اقتصاد", "تهران", "news", "ورزش", "فناوری", "انتخابات", "سلامت", "فرهنگ"] + [f"t{i}" for i in range(200)]
PERSIAN = "ابپتجچحخدرزژسشصطعغفقکگلمنوهی"
LATIN = "abcdefghijklmnopqrstuvwxyz"
VOCABULARY_SIZE = 20_000
START = datetime(2025, 1, 1, tzinfo=timezone.utc)


@lru_cache(maxsize=1)
def vocabulary() -> tuple[list[str], list[float]]:
    """The words, most frequent first, and their cumulative Zipf weights (for ``random.choices``)."""
    rng = random.Random(3)
    words, seen = list(WORDS), set(WORDS)
    while len(words) < VOCABULARY_SIZE:
        letters = PERSIAN if len(words) % 3 else LATIN
        word = "".join(rng.choices(letters, k=rng.randint(4, 8)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words, list(itertools.accumulate(1 / rank for rank in range(1, VOCABULARY_SIZE + 1)))


def search_words(count: int, seed: int = 11) -> list[str]:
    """``count`` search strings (see the module's docstring), each different."""
    words, _ = vocabulary()
    rng, out = random.Random(seed), []
    while len(out) < count:
        q = words[rng.randrange(19, 500)] if len(out) % 2 else f"{words[rng.randrange(2, 12)]} {words[rng.randrange(19, 200)]}"
        if q not in out:
            out.append(q)
    return out


def created_at(i: int, n: int) -> datetime:
    return START + timedelta(seconds=int(i * 365 * 86400 / n))


def generate(n: int, seed: int = 1):
    rng = random.Random(seed)
    words, cum = vocabulary()
    for i in range(n):
        author = rng.randrange(20_000)
        text = " ".join(rng.choices(words, cum_weights=cum, k=12))
        yield {
            "key": f"x:{10_000_000 + i}", "platform": "x", "tenant": TENANT, "source": f"{TENANT}.x.s{i % 4}",
            "kind": "reply" if i % 5 == 0 else "post", "native_id": str(10_000_000 + i), "author_id": str(author),
            "author_handle": f"user{author}", "created_at": created_at(i, n).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "edited_at": None, "deleted": i % 97 == 0, "deleted_at": None, "text": text, "text_clean": text,
            "lang": "fa" if i % 3 else "en", "reply_to": f"x:{10_000_000 + rng.randrange(max(i, 1))}" if i % 5 == 0 else None,
            "quote_of": None, "repost_of": None, "conversation_id": f"x:{10_000_000 + i}",
            "hashtags": rng.sample(TAGS[:8], 1) + rng.sample(TAGS[8:], 1), "mentions": [f"user{rng.randrange(20_000)}"],
            "urls": [], "media": [], "metrics": {"likes": i % 50}, "metadata": {},
            "provenance": {"collected_at": "2026-01-01T00:00:00Z", "method": "api", "source": "s", "format": "x-v2",
                           "run_id": "bench", "raw_pointer": "raw/x.jsonl.gz", "raw_line": i + 1},
            "enrichment": {},
        }
